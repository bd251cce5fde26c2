package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// persuarena redteam through cobra on a small budget: the JSON form names
// the persuadee, both references and the families asked for, with no win
// against the default simulator; a bad split pair is refused.
func TestRedteamCommand(t *testing.T) {
	out, _, err := execRoot(t, "redteam", "--scenarios", "arena", "--families", "wordlist-own,echo", "--search-scenarios", "2",
		"--population", "2", "--generations", "0", "--tmax", "4", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Persuadee  string `json:"persuadee"`
		References []struct {
			Name     string `json:"name"`
			Episodes int    `json:"episodes"`
		} `json:"references"`
		Families []struct {
			Family string `json:"family"`
			Versus []struct {
				Reference string `json:"reference"`
			} `json:"versus"`
		} `json:"families"`
		Win             bool `json:"win"`
		TestScenarios   int  `json:"test_scenarios"`
		SearchScenarios int  `json:"search_scenarios"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.Persuadee != "sim" || len(got.References) != 2 || got.References[1].Name != "answerer" || got.References[0].Episodes != 120 ||
		len(got.Families) != 2 || got.Families[1].Family != "echo" || len(got.Families[0].Versus) != 2 || got.Win ||
		got.TestScenarios != 120 || got.SearchScenarios != 2 {
		t.Errorf("redteam json: %+v", got)
	}
	if _, _, err := execRoot(t, "redteam", "--search-split", "heldout", "--test-split", "heldout"); err == nil || !strings.Contains(err.Error(), "two different splits") {
		t.Errorf("same splits: %v", err)
	}
}

// A win is exit status 2, after the report; other errors 1.
func TestRedteamExitStatus(t *testing.T) {
	var errw bytes.Buffer
	if got := exitStatus(nil, redteamWin{families: []string{"echo"}}, &errw); got != 2 || !strings.Contains(errw.String(), "echo beat an honest reference") {
		t.Errorf("win: status %d, stderr %q", got, errw.String())
	}
	if got := exitStatus(nil, errors.New("boom"), &errw); got != 1 {
		t.Errorf("error: status %d", got)
	}
}
