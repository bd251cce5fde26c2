package p4g

import "github.com/persuarena/persuarena/scenario"

// Scenarios returns the PersuasionForGood scenarios (P4G paper): the set
// embedded in the binary when dir is "", else re-imported from the raw
// CSV files in dir (Import, whose report is dropped). Errors: Import's and
// the embedded set's loading errors.
func Scenarios(dir string) ([]scenario.Scenario, error) {
	if dir == "" {
		return scenario.Resolve("p4g")
	}
	ss, _, err := Import(dir)
	return ss, err
}
