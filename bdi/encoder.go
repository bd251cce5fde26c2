package bdi

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/embed"
)

// Vector encodes s into z = [e_B; e_D; e_I; sqrt(a_rho) rho; sqrt(a_c) c;
// sqrt(a_v) v] (MASP paper, Eq. 8) with enc, checking s first
// (Validate). Its length is 3d + 3 for encoder dimension d (TextDim
// recovers d). Errors: an invalid state, an encoder error, or embeddings
// of unequal length.
func Vector(ctx context.Context, s State, enc embed.Encoder, a Alpha) ([]float64, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	es, err := enc.Encode(ctx, []string{s.Belief, s.Desire, s.Intention})
	if err != nil {
		return nil, err
	}
	if len(es) != 3 {
		return nil, fmt.Errorf("bdi: encoder returned %d embeddings for 3 texts", len(es))
	}
	return Assemble(es[0], es[1], es[2], s, a)
}

// TextDim returns d for a vector z of length 3d + 3, or an error when the
// length has no such form.
func TextDim(z []float64) (int, error) {
	if len(z) < 6 || (len(z)-3)%3 != 0 {
		return 0, fmt.Errorf("bdi: vector of length %d is not 3d+3", len(z))
	}
	return (len(z) - 3) / 3, nil
}
