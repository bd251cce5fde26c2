package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
)

func runTag(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := execRoot(t, args...)
	return out, err
}

func TestTagCommandStrategies(t *testing.T) {
	out, err := runTag(t, "tag", "Hi!", "Have you heard of Save the Children?", "I will donate $1 myself.")
	if err != nil {
		t.Fatal(err)
	}
	if want := "acts: -\npressure: 0\nstrategies: self-modeling,source-related-inquiry,greeting\n"; out != want {
		t.Errorf("tag output %q, want %q", out, want)
	}
}

// TestTagAgreementCommand runs `tag agreement` on the shared P4G copy and
// checks the strategy table's header and one row of each part (the
// figures themselves are pinned in package tagger).
func TestTagAgreementCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "p4g")
	cidata.Require(t, filepath.Join(dir, "300_info.csv"))
	out, err := runTag(t, "tag", "agreement", "--from", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"P4G strategies (tuning: 4483 units; held-out persuaders: 1534 units)",
		"strategy                  | all                         | tuning                      | held-out",
		"greeting                  |   333  0.827  0.733  0.765 |   242",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runTag(t, "tag", "agreement", "--from", t.TempDir()); err == nil || !strings.Contains(err.Error(), "300_dialog.csv") {
		t.Errorf("missing data: %v", err)
	}
}
