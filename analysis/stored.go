package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/registry"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

// runLists is the part of a stored run configuration that orders its
// arms: an eval run's persuader and persuadee lists.
// LoadRun returns run runID's episodes, ordered by the persuaders and
// persuadees of its stored config when it has such lists (eval runs; see
// Order). Errors: store.ErrNotFound (naming the run) and the store's.
func LoadRun(ctx context.Context, st store.Reader, runID string) ([]*episode.Episode, error) {
	run, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	eps, err := st.Episodes(ctx, runID)
	if err != nil {
		return nil, err
	}
	if g, ok := runplan.DecodeGrid(run.Config); ok {
		eps = Order(eps, g.Persuaders, g.Persuadees)
	}
	return eps, nil
}

// StoredArm is one (persuader, persuadee) arm of a stored run, with the
// persuader name the analyses show (Concat's renaming).
type StoredArm struct {
	Run string
	Arm store.Arm
	// Name is Arm.Persuader, or "RUN:persuader" when that persuader is
	// found in more than one of the planned runs.
	Name string
}

// PlanArms lists the arms of runIDs in the order Concat over LoadRun
// would give their episodes: runs in order; in a run, by the position of
// the persuader and then the persuadee in the run's configured lists
// (unlisted names last), ties by name as the store sorts them. It reads
// only the runs' metadata and distinct arms (store.Reader.Arms). Errors: a
// run given twice; a run that does not exist.
func PlanArms(ctx context.Context, st store.Reader, runIDs []string) ([]StoredArm, error) {
	var out []StoredArm
	inRuns := map[string]map[string]bool{}
	for i, id := range runIDs {
		if slices.Contains(runIDs[:i], id) {
			return nil, fmt.Errorf("run %s given twice", id)
		}
		run, err := st.GetRun(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		arms, err := st.Arms(ctx, id)
		if err != nil {
			return nil, err
		}
		if cfg, ok := runplan.DecodeGrid(run.Config); ok {
			pos := func(list []string, name string) int {
				if i := slices.Index(list, name); i >= 0 {
					return i
				}
				return len(list)
			}
			slices.SortStableFunc(arms, func(a, b store.Arm) int {
				if c := pos(cfg.Persuaders, a.Persuader) - pos(cfg.Persuaders, b.Persuader); c != 0 {
					return c
				}
				return pos(cfg.Persuadees, a.Persuadee) - pos(cfg.Persuadees, b.Persuadee)
			})
		}
		for _, a := range arms {
			if inRuns[a.Persuader] == nil {
				inRuns[a.Persuader] = map[string]bool{}
			}
			inRuns[a.Persuader][id] = true
			out = append(out, StoredArm{Run: id, Arm: a, Name: a.Persuader})
		}
	}
	for i, a := range out {
		if len(inRuns[a.Arm.Persuader]) > 1 {
			out[i].Name = a.Run + ":" + a.Arm.Persuader
		}
	}
	return out, nil
}

// FilterArms keeps the arms whose shown name is persuader (all of them
// when it is empty).
func FilterArms(arms []StoredArm, persuader string) []StoredArm {
	if persuader == "" {
		return arms
	}
	var out []StoredArm
	for _, a := range arms {
		if a.Name == persuader {
			out = append(out, a)
		}
	}
	return out
}

// EachArmEpisode streams the episodes of arms, in order, to fn one at a
// time (store.Reader.EachEpisode), the persuader renamed as the arm shows
// it: the episodes Concat of LoadRun would hold, in its order, without
// holding them. Errors: the store's and fn's.
func EachArmEpisode(ctx context.Context, st store.Reader, arms []StoredArm, fn func(*episode.Episode) error) error {
	for _, a := range arms {
		err := st.EachEpisode(ctx, a.Run, func(ep *episode.Episode) error {
			if ep.Persuader != a.Arm.Persuader || ep.Persuadee != a.Arm.Persuadee {
				return nil // an empty name in the filter matches every name
			}
			ep.Persuader = a.Name
			return fn(ep)
		}, store.Filter{Persuader: a.Arm.Persuader, Persuadee: a.Arm.Persuadee})
		if err != nil {
			return err
		}
	}
	return nil
}

// ArmOutcomes returns the run and the outcomes (no turns) of the arm shown
// as persuader per against persuadee pee, the persuader renamed as shown;
// "" and nil when no arm matches. Errors: the store's.
func ArmOutcomes(ctx context.Context, st store.Reader, arms []StoredArm, per, pee string) (string, []episode.Outcome, error) {
	for _, a := range arms {
		if a.Name != per || a.Arm.Persuadee != pee {
			continue
		}
		var os []episode.Outcome
		err := st.EachOutcome(ctx, a.Run, func(o episode.Outcome) error {
			if o.Persuader == a.Arm.Persuader && o.Persuadee == pee {
				o.Persuader = a.Name
				os = append(os, o)
			}
			return nil
		}, store.Filter{Persuader: a.Arm.Persuader, Persuadee: pee})
		return a.Run, os, err
	}
	return "", nil, nil
}

// Analyses lists the analyses of Analyze ("all" runs them in this order).
var Analyses = []string{"table6", "table7", "table8", "table9", "acts", "beliefs", "deadgroups"}

// AnalyzeOptions choose Analyze's analyses and output.
type AnalyzeOptions struct {
	// What is one of Analyses or "all"; Format is text, csv or markdown.
	What, Format string
	// Persuader keeps one persuader (its shown name); Scenario and Rollout
	// (>= 0; -1 when unset) choose table8's episode.
	Persuader, Scenario string
	Rollout             int
	// GRPO sets the dense mode, λ and separation threshold of deadgroups
	// (zero: grpo.DefaultConfig).
	GRPO grpo.Config
}

// Analyze writes the Probe-RPO paper's analyses of runIDs' stored
// episodes to out in one streamed pass (Stream): Tables 6-9 and the data
// of Figures 5-7, blank lines between. Several runs are concatenated
// (PlanArms' renaming). With What "all" a table8 without a candidate
// episode is skipped with a note on errOut. Errors: an unknown What or
// Format, Rollout without Scenario, a bad GRPO config, no episodes (naming
// the persuaders held), and the store's.
func Analyze(ctx context.Context, st store.Reader, runIDs []string, o AnalyzeOptions, out, errOut io.Writer) error {
	whats := []string{o.What}
	if o.What == "all" {
		whats = Analyses
	} else if !slices.Contains(Analyses, o.What) {
		return fmt.Errorf("unknown --what %q (want %s or all)", o.What, strings.Join(Analyses, ", "))
	}
	switch o.Format {
	case "text", "csv", "markdown":
	default:
		return fmt.Errorf("unknown --format %q (want text, csv or markdown)", o.Format)
	}
	if o.Rollout >= 0 && o.Scenario == "" {
		return errors.New("--rollout needs --scenario")
	}
	if o.GRPO.DenseMode == "" {
		o.GRPO = grpo.DefaultConfig()
	}
	if err := o.GRPO.Validate(); err != nil {
		return err
	}
	arms, err := PlanArms(ctx, st, runIDs)
	if err != nil {
		return err
	}
	kept := FilterArms(arms, o.Persuader)
	if len(kept) == 0 {
		if o.Persuader != "" {
			var names []string
			for _, a := range arms {
				if !slices.Contains(names, a.Name) {
					names = append(names, a.Name)
				}
			}
			return fmt.Errorf("no episodes of persuader %q (the runs hold %s)", o.Persuader, strings.Join(names, ", "))
		}
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	so := StreamOptions{Groups: GroupOptions{Config: &o.GRPO}}
	if o.Scenario != "" {
		so.TraceScenario, so.TraceRollout = o.Scenario, max(o.Rollout, 0)
	}
	s := NewStream(so)
	if err := EachArmEpisode(ctx, st, kept, s.Add); err != nil {
		return err
	}
	for i, w := range whats {
		var t Table
		switch w {
		case "table6":
			t = s.AcceptanceByProfile().Table()
		case "table7":
			t = s.AcceptanceGrid().Table()
		case "table8":
			var ep *episode.Episode
			if o.Scenario != "" {
				ep, err = s.FindEpisode()
			} else {
				ep, err = s.LargestDenseAccepted()
			}
			if err != nil {
				if o.What == "all" {
					fmt.Fprintln(errOut, "table8 skipped:", err)
					continue
				}
				return err
			}
			t = TraceOf(ep).Table()
		case "table9":
			t = s.ConversionOf().Table()
		case "acts":
			t = s.ActsByTurn().Table()
		case "beliefs":
			t = s.BeliefTrajectories().Table()
		case "deadgroups":
			t = s.DeadGroups().Table()
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := t.Write(out, o.Format); err != nil {
			return err
		}
	}
	return nil
}

// CompareStoredOptions are CompareStored's options: the paired test's
// (Intersection, Seed, Resamples >= 1), the output Format (text or json),
// and Metrics "masp" for the MASP paper's paired SR@T, AT and RCSR@T with
// T = MASPT (0: min(8, side A's stored tmax)).
type CompareStoredOptions struct {
	Intersection bool
	Seed         uint64
	Resamples    int
	Format       string
	Metrics      string
	MASPT        int
}

// PairMetrics is a method's own comparison of two stored arms, computed
// on the pairs of the Probe-RPO paper's comparison (CompareStored with
// Metrics naming it): the MASP paper's metrics (package masp registers
// "masp"). ComparePairs gets the two arms' whole episodes (transcripts
// included), the comparison c of their outcomes, the two side references
// and CompareStored's options; it returns the value the JSON output holds
// under the metrics' name and the table the text output prints after
// c's. Implementations are safe for concurrent use.
type PairMetrics interface {
	ComparePairs(ctx context.Context, st store.Reader, refs [2]string, a, b []*episode.Episode, c Comparison, o CompareStoredOptions) (any, Table, error)
}

// pairMetrics are the registered PairMetrics by --metrics name.
var pairMetrics = registry.New[PairMetrics]("pair metrics")

// RegisterPairMetrics makes m the metrics CompareStored computes for
// Metrics == name: the method's package calls it from its init (package
// registry), so this package knows no method by name. It panics when name
// is empty or taken.
func RegisterPairMetrics(name string, m PairMetrics) { pairMetrics.Register(name, m) }

// CompareStored compares two stored arms, each named
// "RUN[:PERSUADER[:PERSUADEE]]", on their paired (scenario, rollout)
// outcomes (CompareOutcomes; only the two arms' outcome rows are read)
// and writes the Probe-RPO paper's Table 5 tests to out; with Metrics
// naming registered PairMetrics ("masp") the arms' transcripts are read
// too and that method's comparison follows. Errors: bad options (naming
// the flag; an unregistered --metrics lists the known ones), an unknown
// run or ambiguous side, CompareOutcomes' and the metrics'.
func CompareStored(ctx context.Context, st store.Reader, refA, refB string, o CompareStoredOptions, out io.Writer) error {
	var metrics PairMetrics
	if o.Metrics != "" {
		var ok bool
		if metrics, ok = pairMetrics.Lookup(o.Metrics); !ok {
			return fmt.Errorf("unknown --metrics %q (want one of: %s)", o.Metrics, strings.Join(pairMetrics.Names(), ", "))
		}
	}
	switch {
	case o.Format != "text" && o.Format != "json":
		return fmt.Errorf("unknown --format %q (want text or json)", o.Format)
	case o.Resamples < 1:
		return fmt.Errorf("--resamples must be >= 1, got %d", o.Resamples)
	case o.MASPT < 0:
		return fmt.Errorf("--masp-t must be >= 0, got %d", o.MASPT)
	}
	runA, a, err := sideOutcomes(ctx, st, refA)
	if err != nil {
		return err
	}
	runB, b, err := sideOutcomes(ctx, st, refB)
	if err != nil {
		return err
	}
	c, err := CompareOutcomes(runA, a, runB, b, CompareOptions{Intersection: o.Intersection, Seed: o.Seed, Resamples: o.Resamples})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if metrics == nil {
		if o.Format == "json" {
			return enc.Encode(c)
		}
		return c.Table().WriteText(out)
	}
	// A method's metrics read the transcripts: only here are the two arms'
	// turns loaded.
	ea, err := sideEpisodes(ctx, st, refA)
	if err != nil {
		return err
	}
	eb, err := sideEpisodes(ctx, st, refB)
	if err != nil {
		return err
	}
	m, t, err := metrics.ComparePairs(ctx, st, [2]string{refA, refB}, ea, eb, c, o)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		return enc.Encode(map[string]any{"comparison": c, o.Metrics: m})
	}
	if err := c.Table().WriteText(out); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return t.WriteText(out)
}

// sideOutcomes resolves "RUN[:PERSUADER[:PERSUADEE]]" to that arm's
// outcomes: the arm is chosen among the run's arms (store.Reader.Arms),
// then only its rows are read (EachOutcome with a Filter), with names
// shared between outcomes, so a large run costs tens of bytes per
// episode of the arm instead of every transcript.
func sideOutcomes(ctx context.Context, st store.Reader, ref string) (string, []episode.Outcome, error) {
	runID, arm, _ := strings.Cut(ref, ":")
	if runID == "" {
		return "", nil, fmt.Errorf("side %q: missing run id (want RUN[:PERSUADER[:PERSUADEE]])", ref)
	}
	if _, err := st.GetRun(ctx, runID); err != nil {
		return "", nil, fmt.Errorf("run %s: %w", runID, err)
	}
	arms, err := st.Arms(ctx, runID)
	if err != nil {
		return "", nil, err
	}
	// One outcome per arm stands in for the run in SplitArmOutcomes and
	// PickOutcomes, which then give the same choices and errors as over
	// every episode.
	names := make([]episode.Outcome, len(arms))
	for i, a := range arms {
		names[i] = episode.Outcome{Persuader: a.Persuader, Persuadee: a.Persuadee}
	}
	persuader, persuadee := SplitArmOutcomes(arm, names)
	picked, err := PickOutcomes(runID, names, persuader, persuadee)
	if err != nil {
		return "", nil, err
	}
	if len(picked) != 1 {
		return "", nil, fmt.Errorf("run %s: side %q matches %d arms", runID, ref, len(picked))
	}
	f := store.Filter{Persuader: picked[0].Persuader, Persuadee: picked[0].Persuadee}
	scenarios := map[string]string{}
	var os []episode.Outcome
	err = st.EachOutcome(ctx, runID, func(o episode.Outcome) error {
		id, ok := scenarios[o.ScenarioID]
		if !ok {
			id = o.ScenarioID
			scenarios[id] = id
		}
		o.Persuader, o.Persuadee, o.ScenarioID, o.JudgeError = f.Persuader, f.Persuadee, id, ""
		os = append(os, o)
		return nil
	}, f)
	return runID, os, err
}

// sideEpisodes resolves "RUN[:PERSUADER[:PERSUADEE]]" to that arm's
// episodes, turns included.
func sideEpisodes(ctx context.Context, st store.Reader, ref string) ([]*episode.Episode, error) {
	runID, arm, _ := strings.Cut(ref, ":")
	if runID == "" {
		return nil, fmt.Errorf("side %q: missing run id (want RUN[:PERSUADER[:PERSUADEE]])", ref)
	}
	eps, err := LoadRun(ctx, st, runID)
	if err != nil {
		return nil, err
	}
	persuader, persuadee := SplitArm(arm, eps)
	return Pick(runID, eps, persuader, persuadee)
}
