package view

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// runSets is what a run's configuration says about its scenarios: the
// scenarios by id (for the hidden profile) and the eval plan's episode
// count (runplan.Plan.Total; 0 when unknown), or why they could not be
// loaded.
type runSets struct {
	byID  map[string]*scenario.Scenario
	total int
	err   error
}

// setsOf loads run's scenario sets once (a run's configuration never
// changes). A run without sets, or whose sets no longer load (a moved
// file), gets an error saying so; pages show it in place of the profile.
func (s *Server) setsOf(run store.Run) *runSets {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rs := s.sets[run.ID]; rs != nil {
		return rs
	}
	rs := &runSets{}
	s.sets[run.ID] = rs
	// Every kind stores "scenarios" and "split" under the eval spec's
	// names (runplan.Grid); only eval runs plan a grid of episodes.
	g, ok := runplan.DecodeGrid(run.Config)
	if !ok || len(g.Scenarios) == 0 {
		rs.err = fmt.Errorf("run %s stores no scenario sets", run.ID)
		return rs
	}
	plan, err := runplan.Of(context.Background(), g) // cached per run: not a request's context
	if err != nil {
		rs.err = fmt.Errorf("run %s's scenario sets do not load: %w", run.ID, err)
		return rs
	}
	rs.byID = map[string]*scenario.Scenario{}
	for _, set := range plan.Sets {
		for i := range set.Scenarios {
			rs.byID[set.Scenarios[i].ID] = &set.Scenarios[i]
		}
	}
	if run.Kind == "eval" {
		rs.total = plan.Total()
	}
	return rs
}
