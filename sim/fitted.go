package sim

import (
	_ "embed"
	"fmt"
	"sync"
)

// FittedPath is where the shipped fit lives in the repository; the same
// bytes are embedded in the binary (Fitted).
const FittedPath = "sim/fits/people.json"

//go:embed fits/people.json
var fittedFile []byte

var (
	fittedOnce sync.Once
	fittedCfg  Config
	fittedF    *File
)

// loadFitted parses the embedded fit once.
func loadFitted() {
	c, f, err := ParseFile(FittedPath, fittedFile)
	if err == nil && f.Base != HandName {
		err = fmt.Errorf("%s: base %q, want %q (the fit starts from the hand-set parameters)", FittedPath, f.Base, HandName)
	}
	if err != nil {
		// a test (TestFittedLoads) keeps the embedded file valid
		panic("sim: embedded fit: " + err.Error())
	}
	c.Name = "sim"
	fittedCfg, fittedF = c, f
}

// Fitted returns the shipped fit to people (sim/fits/people.json,
// embedded; made by `persuarena sim fit people`, PersuasionTrace
// per-report beliefs and P4G outcomes and reactions; docs/simulator/fit.md,
// "Fitting to people"):
// HandConfig with the fitted parameters set, named "sim", and the file
// with its provenance. The file is checked by the package's tests; an
// invalid embedded file panics.
func Fitted() (Config, *File) {
	fittedOnce.Do(loadFitted)
	return fittedCfg, fittedF
}
