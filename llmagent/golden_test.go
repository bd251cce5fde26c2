package llmagent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

// The default persuadee prompt (persuasion frame, default variant) is the
// one runs were made with before frames and variants existed: golden files
// in testdata, for the three protocol forms.
func TestDefaultPromptGolden(t *testing.T) {
	sc := testScenario()
	yes, no := true, false
	for _, tc := range []struct {
		file                 string
		structured, protocol bool
		opts                 PersuadeeOptions
	}{
		{"persuadee-default-line.txt", false, true, PersuadeeOptions{Structured: &no}},
		{"persuadee-default-json.txt", true, true, PersuadeeOptions{Structured: &yes}},
		{"persuadee-default-judged.txt", false, false, PersuadeeOptions{Judge: &Judge{name: "llm:j", eng: vllmStub()}}},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := persuadeeSystem(sc, tc.structured, tc.protocol); got != string(want) {
			t.Errorf("%s: prompt changed:\n%s", tc.file, got)
		}
		// The prompt a session actually holds, reached through Start
		// (options, capability detection, the default framing and
		// variant), must be the same golden text.
		if got := start(t, newPersuadee("llm:x", vllmStub(), llm.Role{}, tc.opts)).sys; got != string(want) {
			t.Errorf("%s: a started session's system prompt differs from the golden:\n%s", tc.file, got)
		}
	}
}
