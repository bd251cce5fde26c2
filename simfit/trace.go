package simfit

import (
	"context"
	"math"

	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/persuasiontrace"
	"github.com/persuarena/persuarena/sim"
)

// TraceScore is the PersuasionTrace term of the objective on a set of
// rounds: the persuadee's agreement (probe.Agreement) replayed against
// what the people reported after each persuader message.
type TraceScore struct {
	// NLL is the per-report Laplace negative log-likelihood at the
	// maximum-likelihood scale, 1 + ln(2 MAE) nats (lower is better).
	NLL float64 `json:"nll"`
	// MAE is the per-report mean absolute error (each round's mean over
	// its reports, averaged over rounds, as in the fidelity report); an
	// unreadable belief counts as 0.5.
	MAE float64 `json:"mae"`
	// Shift and SimShift are the people's and the persuadee's mean final
	// change toward the persuader on persuasion rounds, and ControlShift
	// the persuadee's on control rounds; Moved the persuadee's share of
	// persuasion rounds moved by more than 0.1.
	Shift, SimShift, ControlShift, Moved float64
	// Rounds scored, and their People.
	Rounds, People int
}

// traceTerm replays rounds against cfg (fidelity.TraceRounds with the
// fit's seed) and scores them.
//
// Choice: a Laplace likelihood of each report around the replayed belief,
// its scale at the maximum-likelihood value (the MAE), so the term is in
// nats per report like the P4G terms and is minimised with the MAE, the
// figure the fidelity target is stated in; absolute rather than squared
// error because people's reports are bimodal (about half barely move, the
// PersuasionTrace paper's clusters), which a Gaussian would let a few
// large jumps dominate.
func traceTerm(ctx context.Context, rounds []persuasiontrace.Round, cfg sim.Config, seed uint64, workers int) (TraceScore, error) {
	rts, err := fidelity.TraceRounds(ctx, rounds, sim.New(cfg), fidelity.Options{Seed: seed, Workers: workers, Resamples: 1})
	if err != nil {
		return TraceScore{}, err
	}
	return scoreTrace(rts), nil
}

// scoreTrace scores replayed rounds (TraceScore).
func scoreTrace(rts []*fidelity.TraceRound) TraceScore {
	var s TraceScore
	people := map[string]bool{}
	var np, nc int
	for _, rt := range rts {
		people[rt.Person] = true
		e := 0.5
		if rt.MAESim != nil {
			e = *rt.MAESim
		}
		s.MAE += e
		var d float64
		if rt.SimShift != nil {
			d = *rt.SimShift
		}
		if rt.Control {
			s.ControlShift += d
			nc++
			continue
		}
		s.Shift += rt.Shift
		s.SimShift += d
		if persuasiontrace.Moved(d) {
			s.Moved++
		}
		np++
	}
	s.Rounds, s.People = len(rts), len(people)
	if s.Rounds > 0 {
		s.MAE /= float64(s.Rounds)
	}
	if np > 0 {
		s.Shift /= float64(np)
		s.SimShift /= float64(np)
		s.Moved /= float64(np)
	}
	if nc > 0 {
		s.ControlShift /= float64(nc)
	}
	s.NLL = 1 + math.Log(2*math.Max(s.MAE, 1e-6))
	return s
}
