// Package eval runs persuaders against persuadees over scenario sets with a
// bounded worker pool, and summarises the stored episodes into the Probe-RPO
// paper's Table 5 and Table 9 columns.
package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenario"
)

// Set is a named list of scenarios, e.g. the held-out split of "arena".
type Set struct {
	Name      string
	Scenarios []scenario.Scenario
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
func (j Job) Key() episode.Key {
	return episode.Key{Persuader: j.Persuader.Name(), Persuadee: j.Persuadee.Name(), ScenarioID: j.Scenario.ID, Rollout: j.Rollout}
}

// Plan lists every job of a run in a fixed order: persuadee, set,
// scenario (file order), persuader, rollout. rollouts must be >= 1. Jobs
// whose key is in done are left out (resume).
//
// Choice: scenario before persuader, so a scenario's episodes run
// together: what a persuadee derives from a scenario (the simulator's
// reading of it, an engine's cached prompt prefix) is built once and
// reused while it is cached, and a run cut short holds every persuader on
// the same scenarios, so its partial results still pair.
func Plan(persuaders []episode.Persuader, persuadees []episode.Persuadee, sets []Set, rollouts int, done map[episode.Key]bool) []Job {
	var jobs []Job
	for _, pee := range persuadees {
		for _, set := range sets {
			for i := range set.Scenarios {
				for _, per := range persuaders {
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
	// Retries is how many times an episode that failed with a transient
	// fault (episode.ErrTransient: an engine's 5xx, timeouts, refused
	// connections, an open circuit breaker) is replayed from the start,
	// with the same seed, before its failure is recorded; 0 records it at
	// once. Only the last attempt reaches Sink.
	Retries int
	// RetryWait is the wait before the first replay, doubled before each
	// next one, at least the failed episode's RetryAfter, and capped at
	// MaxRetryWait; 0 means DefaultRetryWait.
	RetryWait time.Duration
	// Sleep waits between replays; nil uses a timer that ctx cancels.
	// Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetryWait is the wait before an episode's first replay; long
// enough for a circuit breaker's cooldown to be half over by the second.
const DefaultRetryWait = 2 * time.Second

// MaxRetryWait caps the wait between replays of one episode.
const MaxRetryWait = time.Minute

// retryWait returns the wait before replay try+1 (try from 0).
func (o *Options) retryWait(try int) time.Duration {
	d := o.RetryWait
	if d <= 0 {
		d = DefaultRetryWait
	}
	for range try {
		if d *= 2; d >= MaxRetryWait {
			return MaxRetryWait
		}
	}
	return min(d, MaxRetryWait)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Execute plays jobs with a bounded worker pool. It returns nil when all
// jobs finished, ctx.Err() when cancelled (finished episodes have been
// handed to Sink; unfinished ones are dropped, to be replayed on resume),
// or the first Sink error. Role failures do not stop the run: they arrive
// as episodes with Terminal "failed", transient ones after o.Retries
// replays.
func Execute(ctx context.Context, jobs []Job, o Options) error {
	if o.Sink == nil {
		return errors.New("eval: Options.Sink is nil")
	}
	workers := max(o.Workers, 1)
	sleep := o.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	var mu sync.Mutex
	sinkFailed := false
	return parallel.Each(ctx, len(jobs), workers, func(ctx context.Context, i int) error {
		j := jobs[i]
		seed := episode.Seed(o.Seed, j.Scenario.ID, j.Rollout)
		ep, err := episode.Run(ctx, o.Episode, j.Scenario, j.Persuader, j.Persuadee, seed)
		for try := 0; err == nil && ep.Transient && try < o.Retries; try++ {
			if err = sleep(ctx, min(max(o.retryWait(try), ep.RetryAfter), MaxRetryWait)); err == nil {
				ep, err = episode.Run(ctx, o.Episode, j.Scenario, j.Persuader, j.Persuadee, seed)
			}
		}
		if err != nil { // only cancellation: dropped, replayed on resume
			return nil
		}
		ep.RunID, ep.Rollout = o.RunID, j.Rollout
		// Sink and Progress are called one at a time, in the order
		// episodes finish; after a Sink error no episode is handed on.
		mu.Lock()
		defer mu.Unlock()
		if sinkFailed {
			return nil
		}
		if err := o.Sink(ep); err != nil {
			sinkFailed = true
			return fmt.Errorf("eval: storing episode %s/%d: %w", ep.ScenarioID, ep.Rollout, err)
		}
		if o.Progress != nil {
			o.Progress()
		}
		return nil
	})
}
