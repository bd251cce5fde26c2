package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/export"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

const runTimeLayout = "2006-01-02 15:04:05Z"

// List prints the runs of an existing database, newest first: ID,
// creation time (UTC), kind, status (liveStatus: a running run whose
// process died shows as dead), episodes, failed episodes and the full
// acceptance share of the scored ones ("-" when none), or "no runs".
// Errors: store.OpenReadOnly's and the store's.
func (s *Service) List(ctx context.Context, w io.Writer) error {
	if err := s.ensureRead(ctx); err != nil {
		return err
	}
	rs, err := s.Store.ListRuns(ctx)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no runs")
		return err
	}
	now := s.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCREATED (UTC)\tKIND\tSTATUS\tEPISODES\tFAILED\tACCEPT")
	for _, r := range rs {
		acc := "-"
		if r.Episodes > r.Failed {
			acc = strconv.FormatFloat(100*r.AcceptShare, 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.CreatedAt.UTC().Format(runTimeLayout),
			r.Kind, s.liveStatus(r.Run, now), r.Episodes, r.Failed, acc)
	}
	return tw.Flush()
}

// Show prints run id's metadata, its configuration (indented JSON) and its
// terminal-state counts per (persuader, persuadee) pair, in eval's order
// (armOrder), with an "other" column only when some terminal is none of
// the known ones. Errors:
// store.ErrNotFound; store.OpenExisting's and the store's.
func (s *Service) Show(ctx context.Context, id string, w io.Writer) error {
	if err := s.ensureRead(ctx); err != nil {
		return err
	}
	run, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	pcs, err := s.Store.TerminalCounts(ctx, id)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", run.ID)
	fmt.Fprintf(tw, "kind\t%s\n", run.Kind)
	fmt.Fprintf(tw, "status\t%s\n", s.runStatus(run, pcs))
	fmt.Fprintf(tw, "seed\t%d\n", run.Seed)
	fmt.Fprintf(tw, "version\t%s\n", run.Version)
	fmt.Fprintf(tw, "created\t%s\n", run.CreatedAt.UTC().Format(runTimeLayout))
	fmt.Fprintf(tw, "updated\t%s\n", run.UpdatedAt.UTC().Format(runTimeLayout))
	if err := tw.Flush(); err != nil {
		return err
	}
	if run.Config != nil {
		var buf bytes.Buffer
		if err := json.Indent(&buf, run.Config, "  ", "  "); err != nil {
			buf.Reset()
			buf.Write(run.Config)
		}
		fmt.Fprintf(w, "config\n  %s\n", buf.Bytes())
	}
	fmt.Fprintln(w)
	if len(pcs) == 0 {
		_, err := fmt.Fprintln(w, "no episodes")
		return err
	}
	cols := append(append([]decision.Terminal{}, decision.Terminals...), decision.TermTruncated, decision.TermFailed)
	known := func(pc store.PairCounts) int {
		n := 0
		for _, c := range cols {
			n += pc.Terminals[c]
		}
		return n
	}
	armOrder(run, pcs)
	other := false
	for _, pc := range pcs {
		other = other || pc.Episodes != known(pc)
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"PERSUADER", "PERSUADEE", "EPISODES"}
	for _, c := range cols {
		head = append(head, string(c))
	}
	if other {
		head = append(head, "other")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, pc := range pcs {
		row := []string{pc.Persuader, pc.Persuadee, strconv.Itoa(pc.Episodes)}
		for _, c := range cols {
			row = append(row, strconv.Itoa(pc.Terminals[c]))
		}
		if other {
			row = append(row, strconv.Itoa(pc.Episodes-known(pc)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// armOrder sorts pcs (stably) as eval prints its table: by the position of
// the persuadee in the run's stored --persuadee list, then of the
// persuader in --persuader (plannedOrder); names not listed, such as a
// run kind without these lists, keep the store's order after the listed
// ones.
func armOrder(run store.Run, pcs []store.PairCounts) {
	var spec EvalSpec
	if json.Unmarshal(run.Config, &spec) != nil {
		return
	}
	pos := func(list []string, name string) int {
		if i := slices.Index(list, name); i >= 0 {
			return i
		}
		return len(list)
	}
	slices.SortStableFunc(pcs, func(a, b store.PairCounts) int {
		if c := pos(spec.Persuadees, a.Persuadee) - pos(spec.Persuadees, b.Persuadee); c != 0 {
			return c
		}
		return pos(spec.Persuaders, a.Persuader) - pos(spec.Persuaders, b.Persuader)
	})
}

// ShowKeys writes the key (persuader/persuadee/scenario#rollout, what
// ShowEpisode takes), terminal state and persuader turns of every episode
// of run runID matching f (the viewer's run-page filters), one per line
// in the store's order (persuader, persuadee, scenario ID, rollout), under
// a header; then "N episodes". f.Split is read as scenario.ParseSplit
// reads it ("all" is every split). Errors: an unknown split,
// store.ErrNotFound for an unknown run, the store's and w's.
func (s *Service) ShowKeys(ctx context.Context, runID string, f store.Filter, w io.Writer) error {
	sp, err := scenario.ParseSplit(string(f.Split))
	if err != nil {
		return fmt.Errorf("--split: %w", err)
	}
	f.Split = sp
	if err := s.ensure(ctx, true); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EPISODE	TERMINAL	TURNS")
	total := 0
	for off := 0; ; off += store.MaxPageLimit {
		pg, err := s.Store.EpisodePage(ctx, runID, off, store.MaxPageLimit, f)
		if err != nil {
			return err
		}
		for _, r := range pg.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", r.Key(), r.Terminal, r.Turns)
		}
		total = pg.Total
		if len(pg.Rows) < store.MaxPageLimit {
			break
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%d episodes\n", total)
	return err
}

// ShowEpisode prints the episode of run runID with key
// "persuader/persuadee/scenario#rollout" (episode.ParseKey) as a
// transcript (WriteTranscript). Errors: a malformed key (naming
// --episode), "run R has no episode K", and the store's.
func (s *Service) ShowEpisode(ctx context.Context, runID, key string, w io.Writer) error {
	k, err := episode.ParseKey(key)
	if err != nil {
		return fmt.Errorf("--episode: %w", err)
	}
	if err := s.ensureRead(ctx); err != nil {
		return err
	}
	eps, err := s.Store.Episodes(ctx, runID, store.Filter{Persuader: k.Persuader, Persuadee: k.Persuadee, ScenarioID: k.ScenarioID})
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if ep.Rollout == k.Rollout {
			WriteTranscript(w, ep)
			return nil
		}
	}
	return fmt.Errorf("run %s has no episode %s", runID, k)
}

// Remove deletes runs ids in order, each in one transaction with its
// episodes, turns, probe read-outs, metrics and artifacts, and prints
// "removed run ID" for each. Errors: store.ErrNotFound for an unknown run
// (the runs before it are removed).
func (s *Service) Remove(ctx context.Context, ids []string, w io.Writer) error {
	if err := s.ensure(ctx, true); err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.Store.DeleteRun(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(w, "removed run %s\n", id)
	}
	return nil
}

// WriteTranscript prints ep as a readable transcript: a header (key, run,
// seed, split, domain, resistance), the initial probes and B_0, then per
// turn the persuader's acts, both utterances, the persuadee's decision,
// the probe read-outs p_k ("-" when unreadable, with the reason an engine
// answer was rejected), the belief B_t and the dense reward
// r_t = B_t - B_{t-1} (Probe-RPO paper; "-" where missing), and the end:
// terminal state, R_goal, R_strategy and error when present.
func WriteTranscript(w io.Writer, ep *episode.Episode) {
	num := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	probes := func(rs []probe.Reading) string {
		var parts []string
		for _, r := range rs {
			v := "-"
			switch {
			case r.OK:
				v = fmt.Sprintf("%.3f", r.P)
			case r.Reason != "":
				v = "- (" + r.Reason + ")"
			}
			parts = append(parts, r.Probe+" "+v)
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "episode %s of run %s (seed %d; %s, %s, %s)\n", episode.KeyOf(ep), ep.RunID, ep.Seed, ep.Split, ep.Domain, ep.Resistance)
	fmt.Fprintf(w, "start: probes %s; belief B_0 %s\n", probes(ep.Initial), num(ep.B0, "%.3f"))
	for _, t := range ep.Turns {
		acts := strings.Join(t.Acts, ", ")
		if acts == "" {
			acts = "-"
		}
		fmt.Fprintf(w, "\nturn %d  acts: %s\n", t.T, acts)
		fmt.Fprintf(w, "  persuader: %s\n", t.Persuader)
		fmt.Fprintf(w, "  persuadee: %s\n", t.Persuadee)
		fmt.Fprintf(w, "  decision %s; probes %s; belief B_t %s; dense r_t %s\n", t.Decision, probes(t.Probes), num(t.Belief, "%.3f"), num(t.Dense, "%+.3f"))
	}
	fmt.Fprintf(w, "\nend: %s, R_goal %+.2f", ep.Terminal, ep.RGoal)
	if ep.RStrategy != nil {
		fmt.Fprintf(w, ", R_strategy %+.2f", *ep.RStrategy)
	}
	if ep.Error != "" {
		fmt.Fprintf(w, "; error: %s", ep.Error)
	}
	fmt.Fprintln(w)
}

// ExportEpisodes writes run id's stored episode records as JSON Lines
// (export.Episodes, docs/export.md) to the file out, atomically, or to
// stdout when out is "". Errors: a missing database file, an unknown run
// (store.ErrNotFound), or the write's.
func (s *Service) ExportEpisodes(ctx context.Context, id, out string, stdout io.Writer) error {
	if err := s.ensureRead(ctx); err != nil {
		return err
	}
	return export.ToPath(ctx, s.Store, id, export.Episodes, out, stdout, export.DefaultOptions())
}

// runStatus is run's status as Show prints it; a running eval run (one a
// process plays, or one a job queue's workers play, package queue) adds
// its progress: "running, N/TOTAL episodes stored", TOTAL from its stored
// spec (every persuadee × persuader × scenario × rollout), when its
// scenario sets still load.
func (s *Service) runStatus(run store.Run, pcs []store.PairCounts) string {
	if run.Kind != "eval" || run.Status != store.StatusRunning {
		return s.liveStatus(run, s.Now())
	}
	var spec EvalSpec
	if err := json.Unmarshal(run.Config, &spec); err != nil {
		return run.Status
	}
	plan, err := runplan.Of(context.Background(), spec.Grid)
	if err != nil {
		return run.Status
	}
	return fmt.Sprintf("%s, %d/%d episodes stored", s.liveStatus(run, s.Now()), store.Stored(pcs), plan.Total())
}

// liveStatus is run's status as another process sees it: a running run
// not stamped for StaleAfter (Stale), whose process ended without
// finishing it, is "dead (no heartbeat for D; resume it)".
func (s *Service) liveStatus(run store.Run, now time.Time) string {
	if stale, since := s.Stale(run, now); stale {
		return fmt.Sprintf("dead (no heartbeat for %s; resume it)", since.Round(time.Second))
	}
	return run.Status
}
