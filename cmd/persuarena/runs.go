package main

import (
	"bytes"
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

	show := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show a run's metadata and its terminal states per persuader/persuadee pair",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openRunsDB(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
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

	runsCmd.AddCommand(list, show, export)
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
