package eval_test

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// Execute plays the planned jobs (here the built-in script persuader
// against the simulator on the first four held-out scenarios of the
// embedded arena set) and hands each episode to Sink; Summarize computes
// the terminal shares. The same seed gives the same episodes.
func ExampleExecute() {
	all, err := scenario.Resolve("arena")
	if err != nil {
		panic(err)
	}
	var held []scenario.Scenario
	for _, sc := range all {
		if sc.Split == scenario.Heldout && len(held) < 4 {
			held = append(held, sc)
		}
	}
	per, err := baseline.New("script")
	if err != nil {
		panic(err)
	}
	jobs := eval.Plan([]episode.Persuader{per}, []episode.Persuadee{sim.New(sim.Config{})},
		[]eval.Set{{Name: "arena", Scenarios: held}}, 1, nil)
	var eps []*episode.Episode
	err = eval.Execute(context.Background(), jobs, eval.Options{Seed: 1,
		Sink: func(ep *episode.Episode) error { eps = append(eps, ep); return nil }})
	if err != nil {
		panic(err)
	}
	s := eval.Summarize(per.Name(), "sim", "arena", eps)
	fmt.Printf("%d episodes: accept %.2f, conditional %.2f, pending %.2f, reject %.2f\n", s.N, s.Accept, s.Conditional, s.Pending, s.Reject)
	// Output: 4 episodes: accept 0.00, conditional 0.25, pending 0.75, reject 0.00
}
