package main

import (
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
)

// TestStudyFixedFresh runs `study fixed` at one turn with fresh rollouts:
// the fresh table is printed, and a negative count names its flag.
func TestStudyFixedFresh(t *testing.T) {
	if _, _, err := execRoot(t, "study", "fixed", "--fresh", "-1"); err == nil || !strings.Contains(err.Error(), `invalid argument "-1" for "--fresh" flag: want an integer in 0..100000`) {
		t.Fatalf("--fresh -1: error %v", err)
	}
	cidata.Slow(t, "runs the fixed-sequence study")
	s, _, err := execRoot(t, "study", "fixed", "--tmax", "1", "--refine", "0", "--baseline", "script", "--fresh", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "The same sequences on fresh persons of the searched scenarios (2 rollouts each") ||
		strings.Count(s, "| (baseline) | script |") != 2 || strings.Count(s, "Told each persuadee's type") != 2 {
		t.Errorf("output:\n%s", s)
	}
}
