package runs

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/reporeward"
)

// checkFormat accepts eval's output formats: table ("" too), json, csv.
func checkFormat(format string) error {
	switch format {
	case "", "table", "json", "csv":
		return nil
	}
	return fmt.Errorf("unknown --format %q (want table, json or csv)", format)
}

// evalJSON is eval's JSON output: the run id, the outcome rows and, with
// --metrics masp, the MASP reports per set.
type evalJSON struct {
	RunID    string               `json:"run_id"`
	Outcomes []eval.Summary       `json:"outcomes"`
	MASP     []SetMASP            `json:"masp,omitempty"`
	Reward   []reporeward.Summary `json:"reward,omitempty"`
}

// Write prints res in format: "json" an object {run_id, outcomes, masp};
// "csv" the outcome rows with the run id (eval.WriteRunCSV), then a blank
// line and the MASP records (masp.CSVHeader) when there are any; "table"
// (or "") a run line, the Probe-RPO paper's Table 5/9 columns
// (eval.WriteTable), the MASP paper's metrics per set, and, when the run
// needs them, the Table 7 grid (several persuadees), the engine cost
// table and decision-protocol counts (LLM roles) and the judge counts.
// Errors: an unknown format; the writer's.
func (res *EvalResult) Write(out io.Writer, format string) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	sums, mreps := res.Summaries, res.MASP
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(evalJSON{RunID: res.RunID, Outcomes: sums, MASP: mreps, Reward: res.Reward})
	case "csv":
		if err := eval.WriteRunCSV(out, res.RunID, sums); err != nil || mreps == nil {
			return err
		}
		return writeMASPCSV(out, mreps)
	}
	plan := res.Plan
	names := plan.Spec.Persuadees
	if slices.Contains(names, "sim") {
		fmt.Fprintf(out, "run %s  (persuadee \"sim\" is a seeded simulator, not an LLM)\n", res.RunID)
	} else if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "sim-") }) {
		fmt.Fprintf(out, "run %s  (persuadees \"sim-*\" are seeded simulators, not LLMs)\n", res.RunID)
	} else {
		fmt.Fprintf(out, "run %s\n", res.RunID)
	}
	if err := eval.WriteTable(out, sums); err != nil {
		return err
	}
	if mreps != nil {
		if err := writeMASPText(out, mreps); err != nil {
			return err
		}
	}
	if err := reporeward.WriteSummaries(out, res.Reward); err != nil {
		return err
	}
	return res.writeLLMTables(out)
}

// writeLLMTables prints, after the outcome table, the Table 7 grid when
// there are several persuadees, and the engine cost table and decision
// protocol counts when any role is an LLM.
func (res *EvalResult) writeLLMTables(out io.Writer) error {
	eps, plan := res.Episodes, res.Plan
	if len(plan.Persuadees) > 1 {
		pn, un := plan.names()
		fmt.Fprintln(out)
		if err := eval.WriteGrid(out, eval.CrossGrid(eps, pn, un)); err != nil {
			return err
		}
	}
	if rows := eval.CostTable(eps); rows != nil {
		fmt.Fprintln(out)
		if err := eval.WriteCostTable(out, rows); err != nil {
			return err
		}
	}
	plan.Registry.WriteProtocol(out)
	writeJudgeCounts(out, eps)
	return nil
}

// writeJudgeCounts prints how many scored episodes the judge rated and how
// many of its calls failed (each failure is stored with its episode).
func writeJudgeCounts(out io.Writer, eps []*episode.Episode) {
	var rated, failed, acts, scored int
	for _, ep := range eps {
		if ep.Terminal == decision.TermFailed {
			continue
		}
		scored++
		if ep.RStrategy != nil {
			rated++
		}
		if ep.JudgeError != "" {
			failed++
		}
		if ep.ActsBy == episode.ActsByJudge {
			acts++
		}
	}
	if rated+failed+acts == 0 {
		return
	}
	fmt.Fprintf(out, "judge: %d of %d scored episodes rated, %d with judge errors (R_out = R_goal there)", rated, scored, failed)
	if acts > 0 {
		fmt.Fprintf(out, "; acts tagged by the judge in %d", acts)
	}
	fmt.Fprintln(out)
}

// writeMASPText prints each set's MASP report with a line on where
// success and q came from.
func writeMASPText(w io.Writer, ms []SetMASP) error {
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

// writeMASPCSV writes, after the outcome CSV, a blank line and the MASP
// records (masp.CSVHeader, one table for all sets).
func writeMASPCSV(w io.Writer, ms []SetMASP) error {
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
