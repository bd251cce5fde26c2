package main

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/runs"
)

// maspT is T of --metrics masp (runs.MASPT).
var maspT = runs.MASPT

func writeMASPText(w io.Writer, ms []runs.SetMASP) error {
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
func writeMASPCSV(w io.Writer, ms []runs.SetMASP) error {
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
