package eval

import (
	"encoding/csv"
	"io"
)

// WriteRunCSV is WriteCSV with a first column "run" holding runID on every
// row, so rows of several runs can be concatenated and told apart.
func WriteRunCSV(w io.Writer, runID string, ss []Summary) error {
	judge, noBT := judged(ss), missingBT(ss)
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"run"}, headerOf(judge, noBT)...))
	for _, s := range ss {
		cw.Write(append([]string{runID}, s.row(judge, noBT)...))
	}
	cw.Flush()
	return cw.Error()
}
