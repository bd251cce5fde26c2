package runplan

import (
	"context"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

// Two persuaders × one persuadee × the 120 + 120 held-out scenarios of
// the built-in arena and p4g sets (scenarios/*.splits) × 3 rollouts is
// 1,440 episodes; split "all" takes all 1,788 + 982.
func TestPlanTotal(t *testing.T) {
	g := Grid{Persuaders: []string{"script", "pushy"}, Persuadees: []string{"sim"}, Scenarios: []string{"arena", "p4g"}, Split: "heldout", Rollouts: 3}
	p, err := Of(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sets) != 2 || p.Sets[0].Name != "arena" || p.Sets[1].Name != "p4g" || len(p.Sets[0].Scenarios) != 120 || len(p.Sets[1].Scenarios) != 120 {
		t.Fatalf("sets %d", len(p.Sets))
	}
	if p.Total() != 1440 || len(Scenarios(p.Sets)) != 240 {
		t.Errorf("total %d, %d scenarios; want 1440, 240", p.Total(), len(Scenarios(p.Sets)))
	}
	g.Split, g.Rollouts = "all", 1
	if all, err := Of(context.Background(), g); err != nil || all.Total() != 2*(1788+982) {
		t.Errorf("split all: total %d, %v; want %d", all.Total(), err, 2*(1788+982))
	}
	if _, err := Of(context.Background(), Grid{Scenarios: []string{"arena"}, Split: "test"}); err == nil || !strings.Contains(err.Error(), `unknown split "test"`) {
		t.Errorf("bad split: %v", err)
	}
}

// A method package's sets resolve through the source it registers, the
// longest matching prefix first; a prefix registered twice panics.
func TestRegisterSource(t *testing.T) {
	mk := func(id string) Source {
		return func(name string) ([]scenario.Scenario, error) {
			return []scenario.Scenario{{ID: id + "/" + name, Split: scenario.Heldout}}, nil
		}
	}
	RegisterSource("tst:", mk("short"))
	RegisterSource("tst:long:", mk("long"))
	for ref, want := range map[string]string{"tst:a": "short/a", "tst:long:b": "long/b"} {
		ss, err := ResolveSet(context.Background(), ref)
		if err != nil || len(ss) != 1 || ss[0].ID != want {
			t.Errorf("ResolveSet(%q) = %v, %v; want %s", ref, ss, err, want)
		}
	}
	sets, err := LoadSets(context.Background(), []string{"tst:a"}, "heldout")
	if err != nil || len(sets) != 1 || sets[0].Name != "tst:a" {
		t.Errorf("LoadSets: %+v, %v", sets, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration of a prefix did not panic")
		}
	}()
	RegisterSource("tst:", mk("again"))
}

func TestDecodeGrid(t *testing.T) {
	g, ok := DecodeGrid([]byte(`{"persuaders":["script"],"scenarios":["repo:negotiation"],"split":"all","tmax":6,"other":1}`))
	if !ok || g.Persuaders[0] != "script" || g.Scenarios[0] != "repo:negotiation" || g.Split != "all" || g.Tmax != 6 {
		t.Errorf("DecodeGrid = %+v, %v", g, ok)
	}
	for _, bad := range []string{"", "[1]", `{"tmax":"x"}`} {
		if _, ok := DecodeGrid([]byte(bad)); ok {
			t.Errorf("DecodeGrid(%q) ok", bad)
		}
	}
}
