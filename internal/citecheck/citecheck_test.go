package citecheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
)

// TestModuleCitesPapersByName fails when product code, CLI help or docs cite
// documents that do not ship. Rewrite such a citation to the paper's name
// (docs/papers.md), e.g. "Probe-RPO paper, Table 5".
func TestModuleCitesPapersByName(t *testing.T) {
	cidata.Slow(t, "scans the module's source")
	found, err := Scan(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		switch f.Rule {
		case Citation:
			t.Errorf("cite the paper by name (docs/papers.md): %s", f)
		default:
			t.Errorf("say why, not which tracker or session or what came before: %s", f)
		}
	}
}

// TestScanFindsPlanted plants each forbidden form in a temporary tree and
// checks that Scan reports exactly those lines, and nothing from test files,
// testdata/ or third_party/.
func TestScanFindsPlanted(t *testing.T) {
	dir := t.TempDir()
	sp, sd, is := "SPEC "+"§2", "seed "+"000 Table 5", "issue "+"3 §5"
	files := map[string]string{
		"a/code.go":            "package a\n\n// ok line\n// see " + sd + "\n",
		"cmd/x/help.go":        "package x\n\nconst help = \"(" + sp + ")\"\n",
		"docs/page.md":         "# Page\n\nDecided in " + is + ".\nAlso Issue " + "12.\n",
		"README.md":            "fine\n",
		"a/code_test.go":       "package a\n// " + sd + "\n",
		"a/testdata/golden.md": sd + "\n",
		"third_party/x/y.go":   "package y // " + sp + "\n",
		"docs/clean.md":        "Probe-RPO paper, Table 5; seeds 000 to 004 of the RNG; tissue 3\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"a/code.go", 4, "// see " + sd, Citation},
		{"cmd/x/help.go", 3, "const help = \"(" + sp + ")\"", Citation},
		{"docs/page.md", 3, "Decided in " + is + ".", Citation},
		{"docs/page.md", 4, "Also Issue " + "12.", Citation},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scan = %v\nwant %v", got, want)
	}
}

// TestTrackerRule checks the tracker rule on hand-written lines: each
// positive is a reference a newcomer cannot follow or a piece of history,
// each negative a plain use of the same words that must pass.
func TestTrackerRule(t *testing.T) {
	for _, tc := range []struct {
		line, next string
		want       string
	}{
		// unnamed trackers
		{"// cost of small episodes (performance issue). Errors are", "", Tracker},
		{"the P4G strategy reactions of the simulator issue were not in yet", "", Tracker},
		{"| the issue's | 2 of 24 |", "", Tracker},
		{"Seeds are the training seeds (the issue's minimum is 5).", "", Tracker},
		{"beyond the five the issue lists, because", "", Tracker},
		{"as the previous issue decided", "", Tracker},
		{"See issue 27.", "", Citation},
		// a phrase wrapped onto the next line counts for the first
		{"// keep up with the simulator (performance", "// issue).", Tracker},
		{"// minimum set by the", "\t// issue's table", Tracker},
		// sessions and history
		{"Not run here (no time left in an earlier session).", "", Tracker},
		{"as a previous session measured", "", Tracker},
		{"so memory does not grow (a 177k-episode run used to take", "// 2 GB to print).", Tracker},
		{"With one URL every request goes to that URL, exactly as before.", "", Tracker},
		{"Acts are the same as before.", "", Tracker},
		// negatives: plain English, the running session, upstream trackers
		{`{"the issue is", Voiced, false}, {"the thing is", Voiced, false},`, "", ""},
		{"// Start begins an episode. seed drives all of the session's randomness.", "", ""},
		{"An error never ends the session: the client may send the next message", "", ""},
		{"the other sessions stay where they are", "", ""},
		{"// older `probs` shape (llama.cpp issue", "// #7197, PR #9897). The probe", ""},
		{"see https://github.com/ggml-org/llama.cpp/issues/7197 for the shape", "", ""},
		{"observation (huggingface/OpenEnv PR #805) and", "", ""},
		{"// the seed is used to derive each request's seed", "", ""},
		{"// The budget is what the reader is used to be given.", "", ""},
		{"// the decision gates and the Default basis stay on o as before.", "", ""},
		{"// this issues one request per probe", "", ""},
		{"tissue 3 of the sample", "", ""},
		// a match wholly on the next line is the next line's
		{"// the episodes table stays", "// narrow (performance issue).", ""},
	} {
		if got := check(tc.line, tc.next); got != tc.want {
			t.Errorf("check(%q, %q) = %q, want %q", tc.line, tc.next, got, tc.want)
		}
	}
}
