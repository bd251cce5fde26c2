package sim_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// parsedOnly hides the simulator's fast paths from episode.Run: its
// sessions are a PersuadeeSession and a Prober only, so Run reads the
// probes as token log-probs (Probe, then probe.Read, in the read-out
// goroutine) and tags each utterance with tagger.Tag, and Reply reads the
// concern mentions itself.
type parsedOnly struct{ p *sim.Persuadee }

func (n parsedOnly) Name() string { return n.p.Name() }
func (n parsedOnly) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	s, err := n.p.Start(ctx, sc, seed)
	if err != nil {
		return nil, err
	}
	return struct {
		episode.PersuadeeSession
		episode.Prober
	}{s, s.(episode.Prober)}, nil
}

// TestDirectPathMatchesParsed plays every built-in persuader against the
// default and the hand-set simulator on the arena and p4g held-out
// scenarios (two rollouts each) twice: through the direct paths
// (ProbabilityProber, UtteranceTagger) and through the parsed ones, and
// requires the same episodes bit for bit (JSON with latencies zeroed: the
// floats are written exactly, so every probe reading, belief and dense
// reward must be the same float64). A user basis (one probe id outside
// the default three) is included.
func TestDirectPathMatchesParsed(t *testing.T) {
	ctx := context.Background()
	var scs []scenario.Scenario
	for _, set := range []string{"arena", "p4g"} {
		all, err := scenario.Resolve(set)
		if err != nil {
			t.Fatal(err)
		}
		held := scenario.Filter(all, scenario.Heldout)
		scs = append(scs, held[:min(40, len(held))]...)
	}
	basis := append(probe.Basis{{ID: "own", Question: "Do I lean towards yes?"}}, probe.Default...)
	// enc is ep as JSON without its latencies (the only fields that may
	// differ between two runs).
	enc := func(ep *episode.Episode) string {
		c := *ep
		c.InitialProbeMS, c.Turns = 0, slices.Clone(ep.Turns)
		for k := range c.Turns {
			tu := &c.Turns[k]
			tu.PersuaderMS, tu.PersuadeeMS, tu.ProbeMS = 0, 0, 0
		}
		out, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	pees := []*sim.Persuadee{sim.New(sim.DefaultConfig()), sim.New(sim.HandConfig())}
	n, readings := 0, 0
	for _, name := range baseline.Names() {
		per, err := baseline.New(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pee := range pees {
			for i := range scs {
				for r := range 2 {
					ecfg := episode.Config{}
					if r == 1 {
						ecfg.Basis = basis
					}
					seed := episode.Seed(11, scs[i].ID, r)
					direct, err := episode.Run(ctx, ecfg, &scs[i], per, pee, seed)
					if err != nil {
						t.Fatal(err)
					}
					parsed, err := episode.Run(ctx, ecfg, &scs[i], per, parsedOnly{pee}, seed)
					if err != nil {
						t.Fatal(err)
					}
					if len(direct.Initial) == 0 || direct.B0 == nil {
						t.Fatalf("%s %s: no initial read-out", per.Name(), scs[i].ID)
					}
					readings += len(direct.Initial)
					for _, tr := range direct.Turns {
						readings += len(tr.Probes)
					}
					if d, p := enc(direct), enc(parsed); d != p {
						t.Fatalf("%s %s rollout %d: direct and parsed paths differ:\ndirect %s\nparsed %s", per.Name(), scs[i].ID, r, d, p)
					}
					n++
				}
			}
		}
	}
	if n < 1000 || readings < 20*n {
		t.Fatalf("only %d episodes, %d readings compared", n, readings)
	}
	t.Logf("%d episodes, %d probe readings identical", n, readings)
}
