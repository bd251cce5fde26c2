package episode

import (
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	k, err := ParseKey("script/sim:cfg/a.json/p4g-007#3")
	if err != nil || k != (Key{Persuader: "script", Persuadee: "sim:cfg/a.json", ScenarioID: "p4g-007", Rollout: 3}) {
		t.Errorf("key = %+v, %v", k, err)
	}
	if k.String() != "script/sim:cfg/a.json/p4g-007#3" {
		t.Errorf("String = %s", k)
	}
	// a '#' in the persuadee's file name: the rollout follows the last one
	k, err = ParseKey("script/sim:cfg/v#2.json/p4g-007#3")
	if err != nil || k != (Key{Persuader: "script", Persuadee: "sim:cfg/v#2.json", ScenarioID: "p4g-007", Rollout: 3}) {
		t.Errorf("key with '#' = %+v, %v", k, err)
	}
	for _, bad := range []string{"script/sim#0", "a/b/c", "a/b/c#-1", "a/b/c#x"} {
		if _, err := ParseKey(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
