package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/store"
)

// runsDB is the --db flag of the runs group.
var runsDB string

// runsCmd groups the commands that read the run database.
var runsCmd = &cobra.Command{
	Use:   "runs",
	Short: "List, inspect and export stored runs",
	Long: `Reads the run database (SQLite) that eval and other jobs write: every run, its
episodes, turns and probe read-outs. See docs/store.md for the schema and for
querying it directly with sqlite3.`,
}

func init() {
	dbFlag(runsCmd.PersistentFlags(), &runsDB)

	list := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first, with episode counts and full acceptance rate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := openRunsDB(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			runs, err := db.ListRuns(cmd.Context())
			if err != nil {
				return err
			}
			return writeRunList(cmd.OutOrStdout(), runs)
		},
	}

	var episodeKey string
	show := &cobra.Command{
		Use:   "show RUN_ID [--episode PERSUADER/PERSUADEE/SCENARIO#ROLLOUT]",
		Short: "Show a run's metadata and terminal states per pair, or one episode's transcript",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openRunsDB(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			if episodeKey != "" {
				return showEpisode(cmd.Context(), db, args[0], episodeKey, cmd.OutOrStdout())
			}
			run, err := db.GetRun(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			pcs, err := db.TerminalCounts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return writeRunShow(cmd.OutOrStdout(), run, pcs)
		},
	}

	var (
		jsonl bool
		out   string
	)
	export := &cobra.Command{
		Use:   "export RUN_ID --jsonl [--out FILE]",
		Short: "Export a run's episodes as JSON Lines (one episode per line, stable order)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !jsonl {
				return errors.New("runs export: choose a format: --jsonl (the only one so far)")
			}
			db, err := openRunsDB(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			if out == "" || out == "-" {
				return db.ExportJSONL(cmd.Context(), args[0], cmd.OutOrStdout())
			}
			return db.ExportJSONLFile(cmd.Context(), args[0], out)
		},
	}
	export.Flags().BoolVar(&jsonl, "jsonl", false, "write JSON Lines, the episode records as eval stores them")
	export.Flags().StringVar(&out, "out", "", "output file, written atomically (default: standard output)")

	show.Flags().StringVar(&episodeKey, "episode", "", "print this episode's transcript (key: persuader/persuadee/scenario#rollout)")
	rm := &cobra.Command{
		Use:   "rm RUN_ID...",
		Short: "Delete runs with their episodes, turns, probe read-outs and metrics (one transaction per run)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openRunsDB(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			for _, id := range args {
				if err := db.DeleteRun(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed run %s\n", id)
			}
			return nil
		},
	}
	runsCmd.AddCommand(list, show, export, rm)
	rootCmd.AddCommand(runsCmd)
}

// openRunsDB opens --db for reading, refusing to create a missing file.
func openRunsDB(cmd *cobra.Command) (*store.DB, error) {
	if runsDB != ":memory:" {
		if _, err := os.Stat(runsDB); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no run database at %s (set --db)", runsDB)
		}
	}
	return store.Open(cmd.Context(), runsDB)
}

const runTimeLayout = "2006-01-02 15:04:05Z"

func writeRunList(w io.Writer, runs []store.RunSummary) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCREATED (UTC)\tKIND\tSTATUS\tEPISODES\tFAILED\tACCEPT")
	for _, r := range runs {
		acc := "-"
		if r.Episodes > r.Failed {
			acc = strconv.FormatFloat(100*r.AcceptShare, 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.CreatedAt.UTC().Format(runTimeLayout),
			r.Kind, r.Status, r.Episodes, r.Failed, acc)
	}
	return tw.Flush()
}

func writeRunShow(w io.Writer, run store.Run, pcs []store.PairCounts) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", run.ID)
	fmt.Fprintf(tw, "kind\t%s\n", run.Kind)
	fmt.Fprintf(tw, "status\t%s\n", run.Status)
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
	other := false
	for _, pc := range pcs {
		if pc.Episodes != known(pc, cols) {
			other = true
		}
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
			row = append(row, strconv.Itoa(pc.Episodes-known(pc, cols)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// known sums pc's episodes over the terminal states in cols.
func known(pc store.PairCounts, cols []decision.Terminal) int {
	n := 0
	for _, c := range cols {
		n += pc.Terminals[c]
	}
	return n
}

// parseEpisodeKey reads "persuader/persuadee/scenario#rollout"; the
// persuadee may hold slashes (sim:FILE), persuader and scenario not.
func parseEpisodeKey(s string) (store.EpisodeKey, error) {
	var k store.EpisodeKey
	head, roll, ok := strings.Cut(s, "#")
	first, rest, ok2 := strings.Cut(head, "/")
	i := strings.LastIndex(rest, "/")
	if !ok || !ok2 || i < 0 {
		return k, fmt.Errorf("--episode %q: want persuader/persuadee/scenario#rollout", s)
	}
	n, err := strconv.Atoi(roll)
	if err != nil || n < 0 {
		return k, fmt.Errorf("--episode %q: rollout %q is not a number >= 0", s, roll)
	}
	return store.EpisodeKey{Persuader: first, Persuadee: rest[:i], ScenarioID: rest[i+1:], Rollout: n}, nil
}

// showEpisode prints one episode as a readable transcript: per turn the
// persuader's acts, both utterances, the persuadee's decision, the probe
// read-outs, the belief B_t and the dense reward r_t.
func showEpisode(ctx context.Context, db *store.DB, runID, key string, w io.Writer) error {
	k, err := parseEpisodeKey(key)
	if err != nil {
		return err
	}
	eps, err := db.Episodes(ctx, runID, store.Filter{Persuader: k.Persuader, Persuadee: k.Persuadee, ScenarioID: k.ScenarioID})
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if ep.Rollout == k.Rollout {
			writeTranscript(w, ep)
			return nil
		}
	}
	return fmt.Errorf("run %s has no episode %s", runID, k)
}

func writeTranscript(w io.Writer, ep *episode.Episode) {
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
			if r.OK {
				v = fmt.Sprintf("%.3f", r.P)
			}
			parts = append(parts, r.Probe+" "+v)
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "episode %s of run %s (seed %d; %s, %s, %s)\n", store.KeyOf(ep), ep.RunID, ep.Seed, ep.Split, ep.Domain, ep.Resistance)
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
