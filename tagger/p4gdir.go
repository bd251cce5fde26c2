package tagger

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// WriteP4GAgreement measures the tagger against PersuasionForGood's
// annotated persuader strategies (P4G paper) in dir: it reads
// 300_dialog.csv (ReadP4G) and writes the per-act agreement (Agreement,
// Format), then reads 300_info.csv (ReadP4GPersuaders) and writes, per
// P4G strategy, the agreement on all units, on the tuning part the rules
// were written from and on the held-out persuaders (SplitP4G,
// FormatStrategies). Errors: a missing dir, the files' and readers'
// errors, the writer's.
func WriteP4GAgreement(dir string, out io.Writer) error {
	if dir == "" {
		return fmt.Errorf("--from DIR is required (the folder holding 300_dialog.csv)")
	}
	path := filepath.Join(dir, "300_dialog.csv")
	f, err := filelimit.Open(path, filelimit.Data)
	if err != nil {
		return err
	}
	defer f.Close()
	units, err := ReadP4G(f, path)
	if err != nil {
		return err
	}
	all := Agreement(units)
	if err := all.Format(out); err != nil {
		return err
	}
	infoPath := filepath.Join(dir, "300_info.csv")
	g, err := filelimit.Open(infoPath, filelimit.Data)
	if err != nil {
		return err
	}
	defer g.Close()
	persuaders, err := ReadP4GPersuaders(g, infoPath)
	if err != nil {
		return err
	}
	tuning, held, err := SplitP4G(units, persuaders)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nP4G strategies (tuning: %d units; held-out persuaders: %d units)\n", len(tuning), len(held))
	return FormatStrategies(out, []string{"all", "tuning", "held-out"},
		[]AgreementReport{all, Agreement(tuning), Agreement(held)})
}
