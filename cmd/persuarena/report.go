package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/report"
	"github.com/persuarena/persuarena/store"
)

// newReportCmd returns report: an HTML report of stored runs.
func newReportCmd() *cobra.Command {
	var (
		o      report.StoredOptions
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "report RUN_ID... --out DIR",
		Short: "Write a self-contained HTML report (tables and figures) of stored runs",
		Long: `Writes a self-contained DIR/index.html (with SVG, PNG and tables.md) of the runs'
Probe-RPO paper tables and figures and paired comparisons. See docs/report.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := store.OpenReadOnly(cmd.Context(), dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			return report.WriteStored(cmd.Context(), db, args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "", "directory to write index.html and the figures into (created if missing)")
	f.StringVar(&o.Title, "title", "", `report title (default "PersuArena report")`)
	flagbound.Uint64(f, &o.Seed, "seed", 1, 0, math.MaxUint64, "bootstrap seed of the paired comparison")
	flagbound.Int(f, &o.Resamples, "resamples", analysis.DefaultResamples, 1, analysis.MaxResamples, "paired bootstrap resamples of the comparison")
	f.StringVar(&o.Baseline, "baseline", "", "persuader every other persuader is compared against (default: the first in the runs)")
	f.StringVar(&o.ViewAddr, "view-addr", "", "link runs and the Table 8 episode to a running persuarena view at host:port (e.g. 127.0.0.1:8080)")
	f.BoolVar(&o.Timestamp, "timestamp", false, "add a generated-at line (the report is then no longer byte-identical across builds)")
	dbFlag(f, &dbPath)
	cmd.MarkFlagRequired("out")
	return cmd
}
