package sim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/golden"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// TestGoldenEpisodes plays every built-in persuader against the hand-set
// simulator (sim.HandConfig) and the default one (the shipped P4G fit,
// sim.Fitted) on a few held-out scenarios of each built-in set (goldenCases:
// two of each resistance type, the first of them in two rollouts), and
// compares the episodes (golden.EpisodeJSON, latencies zeroed) with
// testdata/golden/<config>-<set>.txt, one case per episode, so any change
// to transcripts, probes, beliefs or rewards fails here and shows the
// fields that moved. The statistics over whole sets are the sanity and
// gate tests'; these are few enough to read. An intended change to the
// dynamics bumps sim.Version and re-records with
//
//	go test ./sim -run Golden -update
func TestGoldenEpisodes(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  sim.Config
	}{{"hand", sim.HandConfig()}, {"default", sim.DefaultConfig()}} {
		for _, set := range []string{"arena", "p4g"} {
			t.Run(c.name+"-"+set, func(t *testing.T) {
				golden.Check(t, filepath.Join("testdata", "golden", c.name+"-"+set+".txt"), goldenEpisodes(t, c.cfg, set))
			})
		}
	}
}

// goldenEpisodes plays the golden episodes of one built-in set against cfg
// and returns them as a golden file.
func goldenEpisodes(t *testing.T, cfg sim.Config, set string) []byte {
	t.Helper()
	ctx := context.Background()
	pee := sim.New(cfg)
	scs, err := scenario.Resolve(set)
	if err != nil {
		t.Fatal(err)
	}
	var f golden.File
	for _, name := range baseline.Names() {
		per, err := baseline.New(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range goldenCases(scs) {
			for r := range c.rollouts {
				ep, err := episode.Run(ctx, episode.Config{}, c.sc, per, pee, episode.Seed(7, c.sc.ID, r))
				if err != nil {
					t.Fatal(err)
				}
				ep.InitialProbeMS = 0
				for k := range ep.Turns {
					ep.Turns[k].PersuaderMS, ep.Turns[k].PersuadeeMS, ep.Turns[k].ProbeMS = 0, 0, 0
				}
				b, err := golden.EpisodeJSON(ep)
				if err != nil {
					t.Fatal(err)
				}
				f.Case(fmt.Sprintf("episode persuader=%s scenario=%s resistance=%s rollout=%d", name, c.sc.ID, c.sc.Hidden.Resistance, r), b)
			}
		}
	}
	return f.Bytes()
}

// goldenCase is one scenario of the goldens and its number of rollouts.
type goldenCase struct {
	sc       *scenario.Scenario
	rollouts int
}

// goldenCases picks, in set order, the first two held-out scenarios of
// each resistance type (the hidden profile's most telling part: EB, IT,
// AR and AA answer the same persuader differently), the first of each
// type in two rollouts (the persuadee's own randomness).
func goldenCases(scs []scenario.Scenario) []goldenCase {
	var out []goldenCase
	seen := map[scenario.Resistance]int{}
	for i := range scs {
		sc := &scs[i]
		if sc.Split != scenario.Heldout || seen[sc.Hidden.Resistance] >= 2 {
			continue
		}
		seen[sc.Hidden.Resistance]++
		out = append(out, goldenCase{sc, 3 - seen[sc.Hidden.Resistance]})
	}
	return out
}
