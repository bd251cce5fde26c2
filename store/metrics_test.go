package store

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestMetricsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustRun(t, db, "tr")
	mustRun(t, db, "other")
	if got, err := db.Metrics(ctx, "tr"); err != nil || len(got) != 0 {
		t.Fatalf("no metrics yet: %v %v", got, err)
	}
	if err := db.SaveMetrics(ctx, "tr", 1, map[string]float64{"accept": 0.25, "kl": 1e-3}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveMetrics(ctx, "tr", 0, map[string]float64{"accept": 0, "dead_share": 0.5}); err != nil {
		t.Fatal(err)
	}
	// A replayed step replaces its values.
	if err := db.SaveMetrics(ctx, "tr", 1, map[string]float64{"accept": 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveMetrics(ctx, "other", 0, map[string]float64{"accept": 1}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Metrics(ctx, "tr")
	if err != nil {
		t.Fatal(err)
	}
	want := []StepMetrics{
		{Step: 0, Metrics: map[string]float64{"accept": 0, "dead_share": 0.5}},
		{Step: 1, Metrics: map[string]float64{"accept": 0.5, "kl": 1e-3}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Metrics = %v, want %v", got, want)
	}
}

func TestMetricsErrors(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustRun(t, db, "tr")
	for name, c := range map[string]struct {
		run  string
		step int
		m    map[string]float64
		want error
	}{
		"nan":      {"tr", 0, map[string]float64{"ok": 1, "kl": math.NaN()}, ErrInvalid},
		"inf":      {"tr", 0, map[string]float64{"kl": math.Inf(1)}, ErrInvalid},
		"noname":   {"tr", 0, map[string]float64{"": 1}, ErrInvalid},
		"negative": {"tr", -1, map[string]float64{"a": 1}, ErrInvalid},
		"norun":    {"nope", 0, map[string]float64{"a": 1}, ErrNotFound},
	} {
		if err := db.SaveMetrics(ctx, c.run, c.step, c.m); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	// Nothing partial was written.
	if got, _ := db.Metrics(ctx, "tr"); len(got) != 0 {
		t.Errorf("after failed saves: %v", got)
	}
	if _, err := db.Metrics(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Metrics(nope) err = %v", err)
	}
}
