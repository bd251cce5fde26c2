package view

import (
	"encoding/json"
	"fmt"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// runConfig is the part of a stored run configuration the viewer reads:
// an eval run's roles, sets, split and rollouts (runs.EvalSpec's JSON
// names; other kinds share "scenarios" and "split").
type runConfig struct {
	Persuaders []string `json:"persuaders"`
	Persuadees []string `json:"persuadees"`
	Scenarios  []string `json:"scenarios"`
	Split      string   `json:"split"`
	Rollouts   int      `json:"rollouts"`
}

// runSets is what a run's configuration says about its scenarios: the
// scenarios by id (for the hidden profile) and the eval plan's episode
// count (0 when unknown), or why they could not be loaded.
type runSets struct {
	byID    map[string]*scenario.Scenario
	planned int
	err     error
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
	var cfg runConfig
	if len(run.Config) == 0 || json.Unmarshal(run.Config, &cfg) != nil || len(cfg.Scenarios) == 0 {
		rs.err = fmt.Errorf("run %s stores no scenario sets", run.ID)
		return rs
	}
	sp := scenario.Split(cfg.Split)
	if cfg.Split == "all" {
		sp = ""
	}
	ss, err := scenario.ResolveSplit(sp, cfg.Scenarios...)
	if err != nil {
		rs.err = fmt.Errorf("run %s's scenario sets do not load: %w", run.ID, err)
		return rs
	}
	rs.byID = make(map[string]*scenario.Scenario, len(ss))
	for i := range ss {
		rs.byID[ss[i].ID] = &ss[i]
	}
	if run.Kind == "eval" && cfg.Rollouts > 0 {
		rs.planned = len(cfg.Persuaders) * len(cfg.Persuadees) * len(ss) * cfg.Rollouts
	}
	return rs
}
