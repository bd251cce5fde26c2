// Package eval runs persuaders against persuadees over scenario sets with a
// bounded worker pool, and summarises the stored episodes into seed 000's
// Table 5 and Table 9 columns (SPEC §1-2).
package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// Set is a named list of scenarios, e.g. the held-out split of "arena".
type Set struct {
	Name      string
	Scenarios []scenario.Scenario
}

// Key identifies one episode within a run.
type Key struct {
	Persuader, Persuadee, ScenarioID string
	Rollout                          int
}

// KeyOf returns the Key of a finished episode.
func KeyOf(ep *episode.Episode) Key {
	return Key{ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout}
}

// Job is one episode to play.
type Job struct {
	Set       string
	Scenario  *scenario.Scenario
	Rollout   int
	Persuader episode.Persuader
	Persuadee episode.Persuadee
}

// Key returns the job's episode key.
func (j Job) Key() Key {
	return Key{j.Persuader.Name(), j.Persuadee.Name(), j.Scenario.ID, j.Rollout}
}

// Plan lists every job of a run in a fixed order: persuadee, persuader, set,
// scenario (file order), rollout. rollouts must be >= 1. Jobs whose key is
// in done are left out (resume).
func Plan(persuaders []episode.Persuader, persuadees []episode.Persuadee, sets []Set, rollouts int, done map[Key]bool) []Job {
	var jobs []Job
	for _, pee := range persuadees {
		for _, per := range persuaders {
			for _, set := range sets {
				for i := range set.Scenarios {
					for r := range rollouts {
						j := Job{Set: set.Name, Scenario: &set.Scenarios[i], Rollout: r, Persuader: per, Persuadee: pee}
						if !done[j.Key()] {
							jobs = append(jobs, j)
						}
					}
				}
			}
		}
	}
	return jobs
}

// Options configures Execute.
type Options struct {
	// RunID is stamped on every episode.
	RunID string
	// Seed is the run seed; each episode's seed is
	// episode.Seed(Seed, scenario id, rollout), so results do not depend on
	// scheduling or Workers.
	Seed uint64
	// Workers bounds concurrent episodes; <= 0 means 1.
	Workers int
	// Episode configures each episode (Tmax, probe basis, R_goal map,
	// optional judge).
	Episode episode.Config
	// Sink receives each finished episode, from a single goroutine, in
	// completion order. A Sink error stops the run and is returned.
	Sink func(*episode.Episode) error
	// Progress, if set, is called after each Sink call.
	Progress func()
}

// Execute plays jobs with a bounded worker pool. It returns nil when all
// jobs finished, ctx.Err() when cancelled (finished episodes have been
// handed to Sink; unfinished ones are dropped, to be replayed on resume),
// or the first Sink error. Role failures do not stop the run: they arrive
// as episodes with Terminal "failed".
func Execute(ctx context.Context, jobs []Job, o Options) error {
	if o.Sink == nil {
		return errors.New("eval: Options.Sink is nil")
	}
	workers := max(o.Workers, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	jobCh := make(chan Job)
	resCh := make(chan *episode.Episode)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobCh {
				seed := episode.Seed(o.Seed, j.Scenario.ID, j.Rollout)
				ep, err := episode.Run(ctx, o.Episode, j.Scenario, j.Persuader, j.Persuadee, seed)
				if err != nil { // only cancellation
					continue
				}
				ep.RunID, ep.Rollout = o.RunID, j.Rollout
				select {
				case resCh <- ep:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobCh)
		for _, j := range jobs {
			select {
			case jobCh <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(resCh) }()

	var sinkErr error
	for ep := range resCh {
		if sinkErr != nil {
			continue // drain
		}
		if err := o.Sink(ep); err != nil {
			sinkErr = fmt.Errorf("eval: storing episode %s/%d: %w", ep.ScenarioID, ep.Rollout, err)
			cancel()
			continue
		}
		if o.Progress != nil {
			o.Progress()
		}
	}
	if sinkErr != nil {
		return sinkErr
	}
	return ctx.Err()
}
