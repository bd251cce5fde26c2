package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

func TestPair(t *testing.T) {
	o := func(per, sc string, r int) episode.Outcome {
		return episode.Outcome{Persuader: per, Persuadee: "sim", ScenarioID: sc, Rollout: r}
	}
	a := []episode.Outcome{o("x", "s2", 0), o("x", "s1", 1), o("x", "s1", 0), o("x", "s9", 0)}
	b := []episode.Outcome{o("y", "s1", 0), o("y", "s3", 0), o("y", "s2", 0), o("y", "s1", 1)}
	p, err := Pair(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []PairKey{{"s1", 0}, {"s1", 1}, {"s2", 0}}
	if !reflect.DeepEqual(p.Common, want) || !reflect.DeepEqual(p.OnlyA, []PairKey{{"s9", 0}}) || !reflect.DeepEqual(p.OnlyB, []PairKey{{"s3", 0}}) {
		t.Errorf("common %v, only A %v, only B %v", p.Common, p.OnlyA, p.OnlyB)
	}
	if p.ArmA != (Arm{"x", "sim"}) || p.ArmB != (Arm{"y", "sim"}) || p.A[PairKey{"s1", 1}] != &a[1] {
		t.Errorf("arms %v %v", p.ArmA, p.ArmB)
	}
	if p, err := Pair(a, nil); err != nil || len(p.OnlyA) != 4 || len(p.Common) != 0 {
		t.Errorf("empty B: %v, %+v", err, p)
	}
	if _, err := Pair(append(a, o("x", "s1", 0)), b); err == nil || !strings.Contains(err.Error(), "side A holds scenario s1#0 twice") {
		t.Errorf("repeated key: %v", err)
	}
	if _, err := CompareOutcomes("A", a, "B", nil, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "side B has no episodes") {
		t.Errorf("CompareOutcomes, empty B: %v", err)
	}
}
