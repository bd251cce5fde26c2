// Package analysis computes the Probe-RPO paper's analyses from stored
// episodes: full acceptance by hidden resistance type and domain family
// (Table 6), the persuader × persuadee grid (Table 7), a probe trace (Table
// 8), final-belief conversion (Table 9), persuasion acts by turn (Figure 5),
// belief trajectories by terminal state (Figure 6), dead GRPO groups and the
// share the dense term separates (Figure 7), and the paired comparison of two
// persuaders behind Table 5's Δ pp, win/loss, McNemar and Wilcoxon columns,
// and the reliability of the belief before a commitment ask
// (AskReliabilityOf: does B_{t-1} predict P(accept | ask)?).
//
// Every analysis takes plain []*episode.Episode (as store.DB.Episodes
// returns them) and gives a typed result of plain data (structs and slices,
// NaN for an undefined mean or share) that a report can plot, plus a
// Table() rendering for text, CSV and Markdown. Failed episodes
// (decision.TermFailed) carry no outcome: every analysis drops them and
// reports how many it dropped. Stream computes the same results from
// episodes given one at a time (store.DB.EachEpisode), for runs too large
// to hold. Nothing here reads the store or a file.
package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// Arm is one persuader/persuadee pairing: the unit every per-persuader
// analysis reports on.
type Arm struct {
	Persuader, Persuadee string
}

// String formats a as "persuader vs persuadee".
func (a Arm) String() string { return a.Persuader + " vs " + a.Persuadee }

// ArmOf returns ep's arm.
func ArmOf(ep *episode.Episode) Arm { return Arm{ep.Persuader, ep.Persuadee} }

// Arms lists the distinct arms of eps in order of first appearance, and
// labels for them: the persuader name when all episodes share one
// persuadee, "persuader vs persuadee" otherwise.
//
// Choice: columns follow the input order (store.DB.Episodes sorts by
// persuader name; the CLI reorders by the run's configured persuader order)
// rather than a fixed sort, so a caller controls the order.
func Arms(eps []*episode.Episode) (arms []Arm, labels []string) {
	seen := map[Arm]bool{}
	pees := map[string]bool{}
	for _, ep := range eps {
		a := ArmOf(ep)
		pees[a.Persuadee] = true
		if !seen[a] {
			seen[a] = true
			arms = append(arms, a)
		}
	}
	for _, a := range arms {
		if len(pees) > 1 {
			labels = append(labels, a.String())
		} else {
			labels = append(labels, a.Persuader)
		}
	}
	return arms, labels
}

// Scored splits off failed episodes (decision.TermFailed): kept holds the
// rest in input order, failed counts the dropped ones. Truncated episodes
// are kept: they score as pending (reward.GoalRewards.Goal).
func Scored(eps []*episode.Episode) (kept []*episode.Episode, failed int) {
	kept = make([]*episode.Episode, 0, len(eps))
	for _, ep := range eps {
		if ep.Terminal == decision.TermFailed {
			failed++
			continue
		}
		kept = append(kept, ep)
	}
	return kept, failed
}

// RunEpisodes is one stored run's episodes.
type RunEpisodes struct {
	RunID    string
	Episodes []*episode.Episode
}

// Concat joins the episodes of several runs for one analysis. A persuader
// name that occurs in more than one run is renamed "RUNID:name" in every
// run where it occurs, so that the runs' arms stay apart; other names are
// kept. The input episodes are not modified: renamed ones are shallow
// copies. Runs keep their order, and episodes their order within a run.
//
// Choice: only colliding names are prefixed, so combining runs of
// different persuaders reads as one table with plain names.
func Concat(runs []RunEpisodes) []*episode.Episode {
	inRuns := map[string]map[string]bool{}
	for _, r := range runs {
		for _, ep := range r.Episodes {
			if inRuns[ep.Persuader] == nil {
				inRuns[ep.Persuader] = map[string]bool{}
			}
			inRuns[ep.Persuader][r.RunID] = true
		}
	}
	var out []*episode.Episode
	for _, r := range runs {
		for _, ep := range r.Episodes {
			if len(inRuns[ep.Persuader]) > 1 {
				cp := *ep
				cp.Persuader = r.RunID + ":" + ep.Persuader
				ep = &cp
			}
			out = append(out, ep)
		}
	}
	return out
}

// SplitArm splits "PERSUADER[:PERSUADEE]" into its two names using the
// arms eps actually holds, since role names may themselves contain colons
// ("llm:NAME", "planner:PATH"): an exact persuader name wins, then the
// first split at a colon whose two sides are a persuader and a persuadee of
// eps, else the first colon (Pick then reports the names the run holds).
func SplitArm(ref string, eps []*episode.Episode) (persuader, persuadee string) {
	return splitArm(ref, eps, epNames)
}

// SplitArmOutcomes is SplitArm over outcomes (store.DB.EachOutcome), for
// callers that never load turns.
func SplitArmOutcomes(ref string, os []episode.Outcome) (persuader, persuadee string) {
	return splitArm(ref, os, outcomeNames)
}

func epNames(ep *episode.Episode) (string, string)    { return ep.Persuader, ep.Persuadee }
func outcomeNames(o episode.Outcome) (string, string) { return o.Persuader, o.Persuadee }

func splitArm[T any](ref string, xs []T, names func(T) (string, string)) (persuader, persuadee string) {
	pers, pees := map[string]bool{}, map[string]bool{}
	for _, x := range xs {
		r, e := names(x)
		pers[r], pees[e] = true, true
	}
	if ref == "" || pers[ref] {
		return ref, ""
	}
	for i := range len(ref) {
		if ref[i] == ':' && pers[ref[:i]] && pees[ref[i+1:]] {
			return ref[:i], ref[i+1:]
		}
	}
	persuader, persuadee, _ = strings.Cut(ref, ":")
	return persuader, persuadee
}

// Pick selects one arm of a run's episodes for Compare. An empty persuader
// (persuadee) is allowed only when the episodes hold exactly one; runID
// only labels messages.
//
// Errors: the run holds no episodes; the named persuader or persuadee is
// not in the run; or a name is needed and missing. Each message lists the
// available names and the RUN:PERSUADER:PERSUADEE form that selects one.
func Pick(runID string, eps []*episode.Episode, persuader, persuadee string) ([]*episode.Episode, error) {
	return pickArm(runID, eps, persuader, persuadee, epNames)
}

// PickOutcomes is Pick over outcomes (store.DB.EachOutcome), with the
// same errors.
func PickOutcomes(runID string, os []episode.Outcome, persuader, persuadee string) ([]episode.Outcome, error) {
	return pickArm(runID, os, persuader, persuadee, outcomeNames)
}

func pickArm[T any](runID string, xs []T, persuader, persuadee string, names func(T) (string, string)) ([]T, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("run %s holds no episodes", runID)
	}
	pick := func(role, want string, get func(T) string, xs []T) ([]T, error) {
		var names []string
		for _, x := range xs {
			if n := get(x); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		switch {
		case want == "" && len(names) == 1:
			return xs, nil
		case want == "":
			return nil, fmt.Errorf("run %s holds several %ss (%s): choose one with %s:PERSUADER:PERSUADEE",
				runID, role, strings.Join(names, ", "), runID)
		case !slices.Contains(names, want):
			return nil, fmt.Errorf("run %s has no %s %q (it holds %s)", runID, role, want, strings.Join(names, ", "))
		}
		var out []T
		for _, x := range xs {
			if get(x) == want {
				out = append(out, x)
			}
		}
		return out, nil
	}
	xs, err := pick("persuader", persuader, func(x T) string { r, _ := names(x); return r }, xs)
	if err != nil {
		return nil, err
	}
	return pick("persuadee", persuadee, func(x T) string { _, e := names(x); return e }, xs)
}

// Filter returns the episodes of eps whose persuader is persuader (all of
// them when persuader is empty).
func Filter(eps []*episode.Episode, persuader string) []*episode.Episode {
	if persuader == "" {
		return eps
	}
	var out []*episode.Episode
	for _, ep := range eps {
		if ep.Persuader == persuader {
			out = append(out, ep)
		}
	}
	return out
}

func failedNote(failed int) []string {
	if failed == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d failed episode(s) excluded", failed)}
}

// Order stably sorts a copy of eps by the position of each episode's
// persuader in persuaders, then of its persuadee in persuadees (names not
// listed go last, in their input order), so that tables follow a run's
// configured order (an eval run stores its --persuader and --persuadee
// lists).
func Order(eps []*episode.Episode, persuaders, persuadees []string) []*episode.Episode {
	pos := func(list []string, name string) int {
		if i := slices.Index(list, name); i >= 0 {
			return i
		}
		return len(list)
	}
	out := slices.Clone(eps)
	slices.SortStableFunc(out, func(a, b *episode.Episode) int {
		if c := pos(persuaders, a.Persuader) - pos(persuaders, b.Persuader); c != 0 {
			return c
		}
		return pos(persuadees, a.Persuadee) - pos(persuadees, b.Persuadee)
	})
	return out
}
