package masp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/sim"
)

// flakyEncoder fails its failAt-th call (1-based) and delegates the others.
type flakyEncoder struct {
	embed.Encoder
	calls, failAt int
}

func (f *flakyEncoder) Encode(ctx context.Context, texts []string) ([][]float64, error) {
	f.calls++
	if f.calls == f.failAt {
		return nil, errors.New("encoder down")
	}
	return f.Encoder.Encode(ctx, texts)
}

// A state-encoding failure is recorded, not dropped: calls are the target
// (1), h_0 (2), then one per turn, so failing call 3 loses turn 1's BDI
// fields only. Turn 2 is then measured from z_0 with s_1 never set: its
// Delta s equals its progress.
func TestPlayRecordsMindErrors(t *testing.T) {
	per, _ := baseline.New("script")
	cs := heldout(t, 1)[0]
	enc := &flakyEncoder{Encoder: embed.NewHashedTFIDF(embed.DefaultHashDim), failAt: 3}
	d, err := Play(context.Background(), Config{Success: SimSuccessJudge{}, Mind: &Mind{Encoder: enc}}, cs, per, sim.New(sim.Hard()), 11)
	if err != nil || d.Error != "" || d.MindError != "" || d.Initial == nil {
		t.Fatalf("play: %v, %+v", err, d)
	}
	if len(d.Turns) < 2 {
		t.Fatalf("want at least 2 turns, got %d", len(d.Turns))
	}
	t1, t2 := d.Turns[0], d.Turns[1]
	if t1.MindError != "state vector: encoder down" || t1.State == nil || t1.Progress != nil || t1.RS != nil {
		t.Fatalf("turn 1: mind error %q, progress %v", t1.MindError, t1.Progress)
	}
	if t2.MindError != "" || t2.Progress == nil || t2.DeltaS == nil || *t2.DeltaS != *t2.Progress {
		t.Fatalf("turn 2: %+v", t2)
	}
	// A failure at h_0 goes to the dialogue: no z_0, so no turn has progress.
	enc = &flakyEncoder{Encoder: embed.NewHashedTFIDF(embed.DefaultHashDim), failAt: 2}
	d, err = Play(context.Background(), Config{Success: SimSuccessJudge{}, Mind: &Mind{Encoder: enc}}, cs, per, sim.New(sim.Hard()), 11)
	if err != nil || !strings.Contains(d.MindError, "encoder down") || d.Turns[0].Progress != nil || d.Turns[0].MindError != "" {
		t.Fatalf("h_0: %v, %q, %+v", err, d.MindError, d.Turns[0])
	}
}
