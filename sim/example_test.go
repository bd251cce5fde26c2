package sim_test

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// New returns the LLM-free persuadee; episode.Run plays it against a
// persuader on one embedded scenario. The seed fixes the transcript.
func ExampleNew() {
	all, err := scenario.Resolve("arena")
	if err != nil {
		panic(err)
	}
	per, err := baseline.New("script")
	if err != nil {
		panic(err)
	}
	ep, err := episode.Run(context.Background(), episode.Config{}, &all[0], per, sim.New(sim.Config{}), 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d turns, %s, R_goal %+g\n", ep.Persuadee, len(ep.Turns), ep.Terminal, ep.RGoal)
	// Output: sim: 10 turns, pending, R_goal -1
}
