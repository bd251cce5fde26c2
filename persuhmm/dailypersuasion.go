package persuhmm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/scenario"
)

// dpTask is one DailyPersuasion record (Jin et al. 2024): scenario
// fields, the strategy list and simulated sessions.
type dpTask struct {
	ID       string `json:"id"`
	Scenario struct {
		Tag        string `json:"tag"`
		Background string `json:"background"`
		Persuadee  string `json:"persuadee"`
		Persuader  string `json:"persuader"`
		Goal       string `json:"goal"`
		Domain     []struct {
			Domain []string `json:"domain"`
		} `json:"domain"`
	} `json:"scenario"`
	Dialog map[string][]struct {
		Role     string `json:"role"`
		Response string `json:"response"`
	} `json:"dialog"`
}

// LoadDailyPersuasion reads a DailyPersuasion JSON file (an array of
// records with scenario.{tag, background, persuader, persuadee, goal,
// domain[].domain[]} and dialog.session_N[].{role, response}) from a
// user's path into tasks: the domains are the record's distinct domain
// names (at least one; "general" when none), the reference dialogue is
// session_1, and the scenario carries the goal as its proposal, the
// background, the two names and a neutral hidden profile (persona from
// the background, initial stance 0.3), Family empty so DomainsOf uses the
// first domain. Errors: the file's, JSON errors naming the file, or a
// record without id, goal or background (naming its index).
func LoadDailyPersuasion(path string) ([]Task, error) {
	b, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("dailypersuasion: %w", err)
	}
	var recs []dpTask
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("dailypersuasion: %s: %w", path, err)
	}
	out := make([]Task, 0, len(recs))
	for i, r := range recs {
		sc := r.Scenario
		if r.ID == "" || strings.TrimSpace(sc.Goal) == "" || strings.TrimSpace(sc.Background) == "" {
			return nil, fmt.Errorf("dailypersuasion: %s: record %d: id, scenario.goal and scenario.background are required", path, i)
		}
		var doms []string
		for _, d := range sc.Domain {
			for _, n := range d.Domain {
				n = strings.TrimSpace(n)
				if n != "" && !slices.Contains(doms, n) {
					doms = append(doms, n)
				}
			}
		}
		if len(doms) == 0 {
			doms = []string{"general"}
		}
		s := &scenario.Scenario{
			ID: "dp-" + r.ID, Split: scenario.Train, Domain: doms[0],
			Proposal: sc.Goal, AcceptMeans: "Agrees to " + strings.TrimPrefix(sc.Goal, "persuade "),
			Persuader: scenario.Party{Name: sc.Persuader, Role: "persuader"}, Persuadee: scenario.Party{Name: sc.Persuadee, Role: "persuadee"},
			Background: sc.Background,
			Hidden:     scenario.HiddenProfile{Persona: sc.Background, InitialStance: 0.3},
			Provenance: scenario.Provenance{Source: "DailyPersuasion", Ref: r.ID},
		}
		t := Task{Scenario: s, Domains: doms}
		for _, m := range r.Dialog["session_1"] {
			sp := episode.PersuadeeSpeaker
			if m.Role == "persuader" {
				sp = episode.PersuaderSpeaker
			}
			t.Reference = append(t.Reference, episode.Message{Speaker: sp, Text: m.Response})
		}
		out = append(out, t)
	}
	return out, nil
}
