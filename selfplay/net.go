package selfplay

import (
	"fmt"
	"math/rand/v2"

	"github.com/persuarena/persuarena/policynet"
)

// Net is a small categorical policy network, logits = W2·tanh(W1·x + b1)
// + b2 (or W2·x + b2 when Hidden is 0), with planner.Policy's layout for
// any number of actions: W1 is In×Hidden, W2 Hidden×Actions (In×Actions
// when linear), row-major. It is policynet.Net (Validate, Clone, Weights,
// LogProbs there). The user-side policy of self-play is a Net over the
// NumReactions reaction classes; package train's Optimizer updates it
// through the same GoMLX graph the planner trainer uses.
type Net = policynet.Net

// NewNet returns a network whose first layer is drawn from seed (Glorot
// uniform, U(-a, a) with a = sqrt(6/(In+Hidden)); biases 0) and whose
// output layer is zero, so the initial policy is uniform over the
// actions, as planner.NewPolicy does. Errors: in < 1, hidden outside
// 0..4096 or actions < 2.
func NewNet(in, hidden, actions int, seed uint64) (*Net, error) {
	if in < 1 || hidden < 0 || hidden > policynet.MaxHidden || actions < 2 {
		return nil, fmt.Errorf("selfplay: net in %d, hidden %d, actions %d: want in >= 1, hidden 0..4096, actions >= 2", in, hidden, actions)
	}
	return policynet.New(in, hidden, actions, rand.New(rand.NewPCG(seed, 0x75736572))), nil // stream "user"
}
