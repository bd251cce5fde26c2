package runplan

import (
	"context"
	"strings"
	"testing"
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
