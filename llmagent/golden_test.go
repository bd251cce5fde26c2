package llmagent

import (
	"os"
	"path/filepath"
	"testing"
)

// The default persuadee prompt (persuasion frame, default variant) is the
// one runs were made with before frames and variants existed: golden files
// in testdata, for the three protocol forms.
func TestDefaultPromptGolden(t *testing.T) {
	sc := testScenario()
	for _, tc := range []struct {
		file                 string
		structured, protocol bool
	}{
		{"persuadee-default-line.txt", false, true},
		{"persuadee-default-json.txt", true, true},
		{"persuadee-default-judged.txt", false, false},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := persuadeeSystem(sc, tc.structured, tc.protocol); got != string(want) {
			t.Errorf("%s: prompt changed:\n%s", tc.file, got)
		}
		if got := persuadeePrompt(sc, Framing{}, VariantDefault, tc.structured, tc.protocol); got != string(want) {
			t.Errorf("%s: persuadeePrompt differs from persuadeeSystem", tc.file)
		}
	}
}
