package episode_test

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// firstArena returns the first scenario of the built-in arena set.
func firstArena() *scenario.Scenario {
	all, err := scenario.Resolve("arena")
	if err != nil {
		panic(err)
	}
	return &all[0]
}

// Run plays one whole episode: the built-in informer persuader against the
// embedded simulator, probed at t = 0 and after every reply.
func ExampleRun() {
	per, err := baseline.New("informer")
	if err != nil {
		panic(err)
	}
	sc := firstArena()
	ep, err := episode.Run(context.Background(), episode.Config{}, sc, per, sim.New(sim.DefaultConfig()), episode.Seed(1, sc.ID, 0))
	if err != nil {
		panic(err)
	}
	bT, _ := ep.FinalBelief()
	fmt.Printf("%s: %d turns, %s, R_goal %+.0f, B_0 %.4f, B_T %.4f\n", ep.ScenarioID, len(ep.Turns), ep.Terminal, ep.RGoal, *ep.B0, bT)
	fmt.Printf("turn 1 acts %v, reply %.40q...\n", ep.Turns[0].Acts, ep.Turns[0].Persuadee)
	// Output:
	// arena-train-0001: 10 turns, pending, R_goal -1, B_0 0.0086, B_T 0.0648
	// turn 1 acts [evidence], reply "And what would you do if you were me?"...
}

// An Env is driven one turn at a time, as the OpenEnv server does for a
// remote persuader: Reset, then Step with each utterance; Settle gives
// the turn's belief and dense reward.
func ExampleEnv() {
	ctx := context.Background()
	sc := firstArena()
	env := episode.NewEnv(episode.Config{Tmax: 3}, sc, sim.New(sim.DefaultConfig()), episode.Seed(1, sc.ID, 0), episode.EnvOptions{Persuader: "me"})
	if err := env.Reset(ctx); err != nil {
		panic(err)
	}
	r, _ := env.Settle(ctx)
	fmt.Printf("B_0 %.4f\n", *r.Turn.Belief)
	for _, u := range []string{
		"Hi! Could I tell you about something that matters to me?",
		"Studies show that every small contribution adds up.",
		"Would you consider it? It is entirely your choice.",
	} {
		if _, err := env.Step(ctx, episode.Utterance{Text: u}); err != nil {
			panic(err)
		}
		r, err := env.Settle(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("t=%d acts %v -> %s, B %.4f, r %+.4f, done %v\n", r.Turn.T, r.Turn.Acts, r.Turn.Decision, *r.Turn.Belief, *r.Turn.Dense, r.Done)
		if r.Done {
			break
		}
	}
	fmt.Println(env.Episode().Terminal)
	// Output:
	// B_0 0.0086
	// t=1 acts [] -> continue, B 0.0071, r -0.0015, done false
	// t=2 acts [evidence] -> continue, B 0.0061, r -0.0009, done false
	// t=3 acts [commitment autonomy] -> continue, B 0.0056, r -0.0006, done true
	// pending
}
