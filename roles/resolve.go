package roles

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/episode"
)

// ResolvePersuadee resolves one persuadee name (any kind of
// PersuadeeKinds; llm:ROLE needs config, a persuarena.yaml) and
// preflights its LLM backend, so an unreachable backend fails before any
// work. Errors: New's, "--persuadee: " and Registry.Persuadee's, and
// Preflight's.
func ResolvePersuadee(ctx context.Context, config, name string) (episode.Persuadee, error) {
	reg, err := New(config)
	if err != nil {
		return nil, err
	}
	p, err := reg.Persuadee(name)
	if err != nil {
		return nil, fmt.Errorf("--persuadee: %w", err)
	}
	return p, reg.Preflight(ctx)
}
