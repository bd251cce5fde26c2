package bayespersuasion

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// builtin is the built-in claim set: everyday claims across health,
// money, home, travel, work, tech, food, environment, education,
// relationships and charity, written for this project, each with a
// prior, a decision and an evidence pool.
//
//go:embed claims.json
var builtin []byte

// Claims returns the built-in claim set, validated. Errors: a broken
// build (the embedded file does not parse or a claim is invalid).
func Claims() ([]*Claim, error) { return parseClaims(builtin, "built-in claims") }

// LoadClaims reads a JSON array of claims from path (the built-in set's
// format) and validates each. Errors name the file and the claim.
func LoadClaims(path string) ([]*Claim, error) {
	raw, err := filelimit.ReadFile(path, filelimit.Spec)
	if err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	return parseClaims(raw, path)
}

func parseClaims(raw []byte, name string) ([]*Claim, error) {
	var cs []*Claim
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, fmt.Errorf("bayes: %s: %w", name, err)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("%s: claim %d: %w", name, i, err)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("bayes: %s: claim %d: duplicate id %q", name, i, c.ID)
		}
		seen[c.ID] = true
	}
	return cs, nil
}
