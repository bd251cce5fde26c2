package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// setMASP is the MASP report of one scenario set of an eval run.
type setMASP struct {
	Set     string       `json:"set"`
	Report  *masp.Report `json:"report"`
	Dropped int          `json:"dropped,omitempty"`
	// Rationality says where q came from: "transcript rules" or the judge
	// role.
	Rationality string `json:"rationality"`
}

// maspT is T of --metrics masp: --masp-t, else min(masp.DefaultT, Tmax).
func maspT(cfg evalConfig) int {
	if cfg.MASPT > 0 {
		return cfg.MASPT
	}
	tmax := cfg.Tmax
	if tmax <= 0 {
		tmax = episode.DefaultTmax
	}
	return min(masp.DefaultT, tmax)
}

// maspOfEpisodes computes eval --metrics masp: one masp.Report per set on
// the run's stored episodes (masp.EpisodeResults), with the --judge role
// as rationality judge when there is one. The worst case is left out with
// a single persuadee.
func maspOfEpisodes(ctx context.Context, eps []*episode.Episode, pers []episode.Persuader, pees []episode.Persuadee,
	sets []eval.Set, cfg evalConfig, reg *roles.Registry, workers int) ([]setMASP, error) {
	o := masp.EpisodeOptions{Scenarios: map[string]*scenario.Scenario{}, Workers: workers}
	rat := "transcript rules"
	if cfg.Judge != "" {
		role, c, err := reg.Role(cfg.Judge)
		if err != nil {
			return nil, err
		}
		o.Rationality = &masp.LLMRationalityJudge{Engine: c, Sampling: role.Sampling, Thinking: role.Thinking}
		rat = cfg.Judge
	}
	setOf := map[string]string{}
	for _, s := range sets {
		for i := range s.Scenarios {
			o.Scenarios[s.Scenarios[i].ID] = &s.Scenarios[i]
			setOf[s.Scenarios[i].ID] = s.Name
		}
	}
	names := func(n int, f func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	pn := names(len(pers), func(i int) string { return pers[i].Name() })
	un := names(len(pees), func(i int) string { return pees[i].Name() })
	ec := masp.EvalConfig{T: maspT(cfg), Bootstrap: stats.BootstrapOptions{Resamples: 10000, Seed: cfg.Seed}}
	var out []setMASP
	for _, s := range sets {
		var sub []*episode.Episode
		for _, ep := range eps {
			if setOf[ep.ScenarioID] == s.Name {
				sub = append(sub, ep)
			}
		}
		res, dropped, err := masp.EpisodeResults(ctx, sub, pn, un, o)
		if err != nil {
			return nil, fmt.Errorf("--metrics masp, set %s: %w", s.Name, err)
		}
		rep, err := res.Report(ec)
		if err != nil {
			return nil, fmt.Errorf("--metrics masp, set %s: %w", s.Name, err)
		}
		rep.Title = "MASP metrics, set " + s.Name
		if len(pees) < 2 {
			rep.Worst = nil
		}
		out = append(out, setMASP{Set: s.Name, Report: rep, Dropped: dropped, Rationality: rat})
	}
	return out, nil
}

func writeMASPText(w io.Writer, ms []setMASP) error {
	for _, m := range ms {
		fmt.Fprintln(w)
		if err := m.Report.WriteText(w, false); err != nil {
			return err
		}
		fmt.Fprintf(w, "success = full acceptance by turn T (P4G judge on the decision); q from %s; users = the run's persuadees", m.Rationality)
		if m.Dropped > 0 {
			fmt.Fprintf(w, "; %d (scenario, rollout) keys left out (not held by every pair)", m.Dropped)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeMASPJSON writes {"outcomes": [...], "masp": [...]} (eval's JSON
// output is the outcome array alone without --metrics masp).
func writeMASPJSON(w io.Writer, sums []eval.Summary, ms []setMASP) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"outcomes": sums, "masp": ms})
}

// writeMASPCSV writes, after the outcome CSV, a blank line and the MASP
// records (masp.CSVHeader, one table for all sets).
func writeMASPCSV(w io.Writer, ms []setMASP) error {
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.Write(masp.CSVHeader)
	for _, m := range ms {
		cw.WriteAll(m.Report.CSVRows(m.Set))
	}
	cw.Flush()
	return cw.Error()
}
