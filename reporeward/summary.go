package reporeward

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/persuarena/persuarena/episode"
)

// Summary is one arm's reward-vector summary over its scored episodes that
// carry a reward vector: the mean of R and of each component, and per
// rule function the share of episodes that broke it (func.NAME < 0).
type Summary struct {
	Persuader string `json:"persuader"`
	Persuadee string `json:"persuadee"`
	// N counts the episodes with a reward vector.
	N int `json:"n"`
	// Mean holds the mean of every episode component, in first-seen
	// order (Names).
	Names []string           `json:"names"`
	Mean  map[string]float64 `json:"mean"`
	// Broken is the share of episodes breaking each rule, by "func.NAME".
	Broken map[string]float64 `json:"broken"`
}

// Summarize groups eps by persuader and persuadee (first-seen order) and
// summarises their reward vectors; episodes without one are skipped.
func Summarize(eps []*episode.Episode) []Summary {
	var out []Summary
	idx := map[[2]string]int{}
	for _, ep := range eps {
		if ep.Reward == nil {
			continue
		}
		k := [2]string{ep.Persuader, ep.Persuadee}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Summary{Persuader: k[0], Persuadee: k[1], Mean: map[string]float64{}, Broken: map[string]float64{}})
		}
		s := &out[i]
		s.N++
		for _, c := range ep.Reward.Components {
			if _, seen := s.Mean[c.Name]; !seen {
				s.Names = append(s.Names, c.Name)
			}
			s.Mean[c.Name] += c.Value
			if strings.HasPrefix(c.Name, "func.") {
				b := 0.0
				if c.Value < 0 {
					b = 1
				}
				s.Broken[c.Name] += b
			}
		}
	}
	for i := range out {
		n := float64(out[i].N)
		for k := range out[i].Mean {
			out[i].Mean[k] /= n
		}
		for k := range out[i].Broken {
			out[i].Broken[k] /= n
		}
	}
	return out
}

// WriteSummaries prints one row per arm: N, mean R, R_model, E_judge,
// E_func, E, the SOP stages reached, the judge rubrics' mean scores and
// each rule's broken share. Errors: the writer's.
func WriteSummaries(w io.Writer, ss []Summary) error {
	if len(ss) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nREPO reward (REPO paper: E = clip(E_judge + E_func, -n, n), R = R_model·(1 + sign(R_model)·E/n))")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var extra []string
	for _, n := range ss[0].Names {
		if strings.HasPrefix(n, "judge.") || strings.HasPrefix(n, "func.") {
			extra = append(extra, n)
		}
	}
	head := []string{"persuader", "persuadee", "N", "R", "r_model", "e_judge", "e_func", "e", "sop.reached"}
	for _, n := range extra {
		if strings.HasPrefix(n, "func.") {
			head = append(head, n+" broken")
		} else {
			head = append(head, n)
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, s := range ss {
		row := []string{s.Persuader, s.Persuadee, fmt.Sprint(s.N)}
		for _, k := range []string{"r", "r_model", "e_judge", "e_func", "e", "sop.reached"} {
			row = append(row, fmt.Sprintf("%.3f", s.Mean[k]))
		}
		for _, n := range extra {
			if strings.HasPrefix(n, "func.") {
				row = append(row, fmt.Sprintf("%.1f%%", 100*s.Broken[n]))
			} else {
				row = append(row, fmt.Sprintf("%.2f", s.Mean[n]))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
