package store

import (
	"context"
	"errors"
	"testing"
)

func TestDeleteRun(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "a")
	mustRun(t, db, "b")
	for _, run := range []string{"a", "b"} {
		if err := db.SaveEpisode(ctx, run, sampleEpisode(run, "s1", 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SaveMetrics(ctx, "a", 0, map[string]float64{"kl": 0.1}); err != nil {
		t.Fatal(err)
	}
	turns, readings := count(t, db, "turns"), count(t, db, "probe_readings")
	if err := db.DeleteRun(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	// Run b is untouched: exactly half of the turns and read-outs remain.
	if got := [5]int{count(t, db, "runs"), count(t, db, "episodes"), count(t, db, "turns"), count(t, db, "probe_readings"), count(t, db, "step_metrics")}; got != [5]int{1, 1, turns / 2, readings / 2, 0} {
		t.Errorf("after delete: runs, episodes, turns, readings, metrics = %v, want [1 1 %d %d 0]", got, turns/2, readings/2)
	}
	if _, err := db.GetRun(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run still found: %v", err)
	}
	if err := db.DeleteRun(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}
