package sim_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/persuader"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// goldenEpisodes is the SHA-256 of every episode (JSON, latencies zeroed)
// that each built-in persuader plays against the hand-set simulator
// (sim.HandConfig) on the first 60 scenarios of each built-in set, two
// rollouts each, so any change to transcripts, probes, beliefs or rewards
// fails here. First recorded before the simulator's hot-path
// optimisations; re-recorded after the P4G strategy reactions
// (sim.StrategyParams) from the code without those optimisations, and the
// optimised code gives the same hash. An intended change to the dynamics
// bumps sim.Version and records a new hash.
const goldenEpisodes = "259ed4e09298b9c18da1384deb25ca525cf87e756419559253e02284b7517d43"

// goldenDefault is the same hash for the default simulator (the shipped
// fit, sim.Fitted: sim/fits/people.json); refitting the default records a
// new one.
const goldenDefault = "17d8fb99ccbaf8f8281d7e8b88645be4361810299571ad4f67963a13f1827007"

func TestGoldenEpisodes(t *testing.T) {
	if got, n := goldenHash(t, sim.HandConfig()); got != goldenEpisodes {
		t.Errorf("hand-set: %d episodes hash to %s, want %s", n, got, goldenEpisodes)
	}
	if got, n := goldenHash(t, sim.DefaultConfig()); got != goldenDefault {
		t.Errorf("default: %d episodes hash to %s, want %s", n, got, goldenDefault)
	}
}

// goldenHash plays the golden episodes against cfg and returns their hash
// and count.
func goldenHash(t *testing.T, cfg sim.Config) (string, int) {
	t.Helper()
	ctx := context.Background()
	pee := sim.New(cfg)
	h := sha256.New()
	n := 0
	for _, set := range []string{"arena", "p4g"} {
		scs, err := scenario.Resolve(set)
		if err != nil {
			t.Fatal(err)
		}
		scs = scs[:min(60, len(scs))]
		for _, name := range persuader.Names() {
			per, err := persuader.New(name)
			if err != nil {
				t.Fatal(err)
			}
			for i := range scs {
				for r := range 2 {
					ep, err := episode.Run(ctx, episode.Config{}, &scs[i], per, pee, episode.Seed(7, scs[i].ID, r))
					if err != nil {
						t.Fatal(err)
					}
					ep.InitialProbeMS = 0
					for k := range ep.Turns {
						ep.Turns[k].PersuaderMS, ep.Turns[k].PersuadeeMS, ep.Turns[k].ProbeMS = 0, 0, 0
					}
					b, err := json.Marshal(ep)
					if err != nil {
						t.Fatal(err)
					}
					h.Write(b)
					h.Write([]byte{'\n'})
					n++
				}
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}
