package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/scenario"
)

func TestEpisodePage(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	// Six episodes: script × s1..s3 and informer × s1..s3; informer's s2
	// failed, script's s3 is a charity (P4G) scenario with resistance AR.
	for _, per := range []string{"script", "informer"} {
		for i, sc := range []string{"s1", "s2", "s3"} {
			ep := sampleEpisode("r1", sc, 0)
			ep.Persuader = per
			if per == "informer" && sc == "s2" {
				ep.Terminal, ep.RGoal, ep.Error = decision.TermFailed, 0, "engine down"
			}
			if per == "script" && i == 2 {
				ep.Family, ep.Resistance = scenario.Charity, scenario.AutonomyResistance
			}
			if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys := func(pg Page) []string {
		var ks []string
		for _, r := range pg.Rows {
			ks = append(ks, r.Key().String())
		}
		return ks
	}
	pg, err := db.EpisodePage(ctx, "r1", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Episodes' order: informer before script, then scenario id.
	want := []string{"informer/sim/s2#0", "informer/sim/s3#0", "script/sim/s1#0"}
	if got := keys(pg); pg.Total != 6 || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("page(1, 3) = %v total %d, want %v total 6", got, pg.Total, want)
	}
	r := pg.Rows[0]
	if r.Terminal != decision.TermFailed || r.Error != "engine down" || r.Turns != 3 || r.Seed != bigSeed ||
		r.B0 == nil || *r.B0 != 0.375 || r.BFinal == nil || *r.BFinal != 0.875 || r.Domain != "flu vaccination" {
		t.Fatalf("row = %+v", r)
	}
	pg, err = db.EpisodePage(ctx, "r1", 0, 10, Filter{Terminal: decision.TermFailed})
	if err != nil || pg.Total != 1 || len(pg.Rows) != 1 || pg.Rows[0].ScenarioID != "s2" {
		t.Fatalf("failed filter: %+v, %v", pg, err)
	}
	pg, err = db.EpisodePage(ctx, "r1", 0, 10, Filter{Family: scenario.Charity, Resistance: scenario.AutonomyResistance})
	if err != nil || pg.Total != 1 || keys(pg)[0] != "script/sim/s3#0" {
		t.Fatalf("family/resistance filter: %v total %d, %v", keys(pg), pg.Total, err)
	}
	pg, err = db.EpisodePage(ctx, "r1", 6, 10)
	if err != nil || pg.Total != 6 || len(pg.Rows) != 0 || pg.Rows == nil {
		t.Fatalf("past the end: %+v, %v", pg, err)
	}
	for _, c := range [][2]int{{-1, 10}, {0, 0}, {0, MaxPageLimit + 1}} {
		if _, err := db.EpisodePage(ctx, "r1", c[0], c[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("offset %d limit %d: err = %v, want ErrInvalid", c[0], c[1], err)
		}
	}
	if _, err := db.EpisodePage(ctx, "nope", 0, 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: err = %v, want ErrNotFound", err)
	}
}

// TestTerminalCountsCoveringIndex checks that the per-pair terminal
// counts read the covering index of migration 6, not the episode rows.
func TestTerminalCountsCoveringIndex(t *testing.T) {
	db := openMem(t)
	rows, err := db.sql.Query(`EXPLAIN QUERY PLAN SELECT persuader, persuadee, terminal, COUNT(*) FROM episodes
			WHERE run_id = ? GROUP BY persuader, persuadee, terminal ORDER BY persuader, persuadee, terminal`, "r1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) != 1 || !strings.Contains(plan[0], "COVERING INDEX episodes_run_pair_terminal") {
		t.Errorf("plan = %q, want one covering-index search of episodes_run_pair_terminal", plan)
	}
}
