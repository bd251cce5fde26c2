package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/cidata"
)

// storeOrder sorts a copy of eps as store.DB.Episodes and EachEpisode
// return a run (persuader, persuadee, scenario, rollout), so each Figure 7
// group is contiguous.
func storeOrder(eps []*episode.Episode) []*episode.Episode {
	out := slices.Clone(eps)
	slices.SortStableFunc(out, func(a, b *episode.Episode) int {
		for _, c := range []int{strings.Compare(a.Persuader, b.Persuader), strings.Compare(a.Persuadee, b.Persuadee),
			strings.Compare(a.ScenarioID, b.ScenarioID), a.Rollout - b.Rollout} {
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// writeAll writes r with WriteDir and returns every file's bytes by name.
func writeAll(t *testing.T, r *Report) map[string]string {
	t.Helper()
	dir := t.TempDir()
	names, err := r.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// TestBuildStreamEqualsInMemory: the streamed report (BuildStream over a
// store-ordered source, and Build over a slice in any order) writes the
// same files, byte for byte, as the in-memory Build it replaced
// (buildInMemory, kept below as the reference), on the hand-built run, with
// two rollouts (Figure 7 groups, comparison), with training steps, and
// with three persuaders (no comparison).
func TestBuildStreamEqualsInMemory(t *testing.T) {
	cidata.Slow(t, "builds a report twice over a large run")
	hb, run := handBuilt(t)
	two := withRollouts(hb)
	var train []*episode.Episode
	for _, ep := range two {
		cp := *ep
		cp.Rollout += 2
		train = append(train, ep, &cp)
	}
	three := slices.Clone(two)
	for _, ep := range hb {
		cp := *ep
		cp.Persuader, cp.Persuadee = "gamma", "sim-hard"
		three = append(three, &cp)
	}
	set := map[string]string{"s1": "one", "s2": "one", "s3": "two"}
	info := []RunInfo{{ID: run.ID, Kind: run.Kind, Config: run.Config, Episodes: len(hb)}}
	for name, c := range map[string]struct {
		eps []*episode.Episode
		o   Options
	}{
		"handbuilt": {hb, Options{Title: "T", Runs: info, Resamples: 300}},
		"rollouts":  {two, Options{Sets: []string{"two", "one"}, SetOf: func(id string) string { return set[id] }, Resamples: 300, CompareSeed: 4}},
		"train": {train, Options{Resamples: 100, Groups: analysis.GroupOptions{Step: func(ep *episode.Episode) int { return ep.Rollout/2 + 1 }},
			GRPO: &grpo.Config{Lambda: 0.3, G: 2, ScenariosPerStep: 1, Epochs: 1, LearningRate: 0.1, Eps: 1e-6, DenseMode: grpo.DenseScaled, SeparateThreshold: 0.1}}},
		"three": {three, Options{Resamples: 100}},
	} {
		ref, err := buildInMemory(c.eps, c.o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := writeAll(t, ref)
		sorted := storeOrder(c.eps)
		refSorted, err := buildInMemory(sorted, c.o)
		if err != nil {
			t.Fatal(err)
		}
		wantSorted := writeAll(t, refSorted)
		src := SliceSource(sorted)
		src.Ungrouped = false
		for how, got := range map[string]func() (*Report, error){
			"Build":       func() (*Report, error) { return Build(c.eps, c.o) },
			"BuildStream": func() (*Report, error) { return BuildStream(src, c.o) },
		} {
			r, err := got()
			if err != nil {
				t.Fatalf("%s %s: %v", name, how, err)
			}
			w := want
			if how == "BuildStream" {
				w = wantSorted
			}
			g := writeAll(t, r)
			if len(g) != len(w) || len(g) < 5 {
				t.Errorf("%s %s: %d files, want %d", name, how, len(g), len(w))
			}
			for n, b := range w {
				if g[n] != b {
					t.Errorf("%s %s: %s differs (%d vs %d bytes)", name, how, n, len(g[n]), len(b))
				}
			}
			if fmt.Sprint(r.Skipped) != fmt.Sprint(ref.Skipped) && how == "Build" {
				t.Errorf("%s: skipped %q, want %q", name, r.Skipped, ref.Skipped)
			}
		}
		if name == "rollouts" && len(ref.Comparisons) != 1 {
			t.Errorf("rollouts: %d comparisons, want 1", len(ref.Comparisons))
		}
	}
}

// buildInMemory is Build as it was before streaming (with its helpers
// summarizeInMemory and topTwoTableInMemory): every analysis over the
// slice, assembled into sections by the report's own assemble (the
// headings and intros are not what this reference checks).
func buildInMemory(eps []*episode.Episode, o Options) (*Report, error) {
	if len(eps) == 0 {
		return nil, errors.New("report: no episodes")
	}
	step := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	r := &Report{Title: o.Title, Generator: o.Generator, Generated: o.Generated, Runs: o.Runs, Episodes: len(eps)}
	if r.Title == "" {
		r.Title = "PersuArena report"
	}
	for _, ep := range eps {
		if !slices.Contains(r.Persuaders, ep.Persuader) {
			r.Persuaders = append(r.Persuaders, ep.Persuader)
		}
		if !slices.Contains(r.Persuadees, ep.Persuadee) {
			r.Persuadees = append(r.Persuadees, ep.Persuadee)
		}
	}
	_, r.Failed = analysis.Scored(eps)

	step("summary (Tables 5 and 9)")
	r.Summary = summarizeInMemory(eps, o)
	cfg := grpo.DefaultConfig()
	if o.GRPO != nil {
		cfg = *o.GRPO
	}
	adv, err := Advantages(eps, o.Groups, cfg)
	if err != nil {
		return nil, err
	}
	largest, largestErr := analysis.LargestDenseAccepted(eps, "")
	err = r.assemble(o, step, analyses{
		byProfile:    func() analysis.ProfileAcceptance { return analysis.AcceptanceByProfile(eps) },
		grid:         func() analysis.Grid { return analysis.AcceptanceGrid(eps) },
		largest:      largest,
		largestErr:   largestErr,
		topTwo:       func() analysis.Table { return topTwoTableInMemory(eps) },
		conversion:   func() analysis.Conversion { return analysis.ConversionOf(eps) },
		acts:         func() analysis.ActCurves { return analysis.ActsByTurn(eps) },
		trajectories: func() analysis.Trajectories { return analysis.BeliefTrajectories(eps) },
		dead:         func() analysis.DeadGroupStats { return analysis.DeadGroups(eps, o.Groups) },
		terms:        func() AdvantageTerms { return adv },
	})
	if err != nil {
		return nil, err
	}
	if err := r.compare(o, SliceSource(eps).Outcomes, step); err != nil {
		return nil, err
	}
	return r, nil
}

// summarize applies eval.Summarize to every persuader × persuadee × set
// group, persuadees outermost (as eval prints), then persuaders in episode
// order, then sets in o.Sets order (others sorted). Groups without
// episodes are left out.
//
// Choice: an episode whose set is unknown goes to set "all", so that a
// run without a stored scenario list still gets a summary.
func summarizeInMemory(eps []*episode.Episode, o Options) []eval.Summary {
	setOf := func(id string) string {
		if o.SetOf != nil {
			if s := o.SetOf(id); s != "" {
				return s
			}
		}
		return "all"
	}
	groups := eval.Group(eps, setOf)
	var pers, pees, sets []string
	for _, ep := range eps {
		if !slices.Contains(pers, ep.Persuader) {
			pers = append(pers, ep.Persuader)
		}
		if !slices.Contains(pees, ep.Persuadee) {
			pees = append(pees, ep.Persuadee)
		}
	}
	present := map[string]bool{}
	for k := range groups {
		present[k.Set] = true
	}
	for _, s := range o.Sets {
		if present[s] && !slices.Contains(sets, s) {
			sets = append(sets, s)
		}
	}
	var rest []string
	for s := range present {
		if !slices.Contains(sets, s) {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	sets = append(sets, rest...)
	var out []eval.Summary
	for _, pee := range pees {
		for _, per := range pers {
			for _, s := range sets {
				if g := groups[eval.GroupKey{Persuader: per, Persuadee: pee, Set: s}]; len(g) > 0 {
					out = append(out, eval.Summarize(per, pee, s, g))
				}
			}
		}
	}
	return out
}

// topTwoTable summarises TraceOf's top-two share over the fully accepted
// episodes of each arm: how many have a dense signal, and the mean,
// median and range of the share.
func topTwoTableInMemory(eps []*episode.Episode) analysis.Table {
	t := analysis.Table{Title: "Share of Σ|r_dense| carried by the two largest turns, fully accepted episodes",
		Header: []string{"persuader", "accepted", "with dense", "mean%", "median%", "min%", "max%"},
		Notes:  []string{"with dense: accepted episodes whose Σ|r_dense| > 0 (the share is undefined otherwise)"}}
	scored, _ := analysis.Scored(eps)
	arms, labels := analysis.Arms(scored)
	for i, a := range arms {
		var shares []float64
		accepted := 0
		for _, ep := range scored {
			if analysis.ArmOf(ep) != a || ep.Terminal != decision.TermAccept {
				continue
			}
			accepted++
			if s := analysis.TraceOf(ep).TopTwoShare; !math.IsNaN(s) {
				shares = append(shares, s)
			}
		}
		row := []string{labels[i], strconv.Itoa(accepted), strconv.Itoa(len(shares)), "-", "-", "-", "-"}
		if len(shares) > 0 {
			slices.Sort(shares)
			sum := 0.0
			for _, x := range shares {
				sum += x
			}
			n := len(shares)
			med := shares[n/2]
			if n%2 == 0 {
				med = (shares[n/2-1] + shares[n/2]) / 2
			}
			row = []string{labels[i], strconv.Itoa(accepted), strconv.Itoa(n), pct(sum / float64(n)), pct(med), pct(shares[0]), pct(shares[n-1])}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
