package bayespersuasion

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// Strategy is a sender's disclosure policy at the planner level: which of
// the evidence items that hold to disclose, in what order. Sender turns a
// Strategy into an episode.Persuader.
type Strategy interface {
	// Name identifies the strategy in tables, e.g. "greedy".
	Name() string
	// Begin starts one episode's plan on claim c in world w; rng is the
	// episode's own randomness.
	Begin(c *Claim, w World, rng *rand.Rand) Plan
}

// Plan is one episode of a Strategy.
type Plan interface {
	// Next returns the next item to disclose (an index into
	// Claim.Evidence that holds and is not yet told), given the items told
	// so far and the Bayesian receiver's belief after them; ok false means
	// stop.
	Next(told []bool, post []float64) (item int, ok bool)
}

// candidates returns the items that hold and are not yet told.
func candidates(w World, told []bool) []int {
	var out []int
	for i, h := range w.Holds {
		if h && !told[i] {
			out = append(out, i)
		}
	}
	return out
}

type planFunc func(told []bool, post []float64) (int, bool)

func (f planFunc) Next(told []bool, post []float64) (int, bool) { return f(told, post) }

type strategy struct {
	name  string
	begin func(c *Claim, w World, rng *rand.Rand) Plan
}

func (s strategy) Name() string                                 { return s.name }
func (s strategy) Begin(c *Claim, w World, rng *rand.Rand) Plan { return s.begin(c, w, rng) }

// FullDisclosure discloses every item that holds, in pool order.
var FullDisclosure Strategy = strategy{"full", func(_ *Claim, w World, _ *rand.Rand) Plan {
	return planFunc(func(told []bool, _ []float64) (int, bool) {
		if c := candidates(w, told); len(c) > 0 {
			return c[0], true
		}
		return 0, false
	})
}}

// NoDisclosure discloses nothing.
var NoDisclosure Strategy = strategy{"none", func(*Claim, World, *rand.Rand) Plan {
	return planFunc(func([]bool, []float64) (int, bool) { return 0, false })
}}

// Greedy discloses, one at a time, the holding item that raises the
// sender's value V of the receiver's posterior most, and stops when no
// item keeps V and raises the belief in the claim.
//
// Choice: V is a step function of the belief, so a single item often
// leaves it unchanged although two together would move the receiver;
// items are therefore ranked by V after the item, then by the belief in
// the claim after it, and an item is disclosed when it does not lower V
// and raises V or the belief.
var Greedy Strategy = strategy{"greedy", func(c *Claim, w World, _ *rand.Rand) Plan {
	return planFunc(func(told []bool, post []float64) (int, bool) {
		v0, b0 := c.Value(post), c.Belief(post)
		pick, pv, pb := -1, math.Inf(-1), math.Inf(-1)
		for _, i := range candidates(w, told) {
			q, err := c.PosteriorFrom(post, []int{i})
			if err != nil {
				continue
			}
			v, b := c.Value(q), c.Belief(q)
			if v > pv+1e-12 || (v > pv-1e-12 && b > pb) {
				pick, pv, pb = i, v, b
			}
		}
		if pick < 0 || pv < v0-1e-12 || (pv < v0+1e-12 && pb <= b0+1e-12) {
			return 0, false
		}
		return pick, true
	})
}}

// OptimalSignal implements the claim's optimal signal (Benchmarks.Signal)
// as far as the pool allows: knowing the state, it draws the recommended
// action from the signal and discloses the smallest set of holding items
// (first in pool order among equals) after which the Bayesian receiver
// takes that action; when the recommendation is the receiver's choice at
// the prior, or no set of holding items produces it, it discloses
// nothing. bench maps claim ids to their Benchmarks (Optimum).
func OptimalSignal(bench map[string]Benchmarks) Strategy {
	return strategy{"optimal", func(c *Claim, w World, rng *rand.Rand) Plan {
		var set []int
		if b, ok := bench[c.ID]; ok {
			u, rec := rng.Float64(), len(c.Actions)-1
			for a, p := range b.Signal[w.State] {
				if u < p {
					rec = a
					break
				}
				u -= p
			}
			if rec != c.BestResponse(c.Prior) {
				set = smallestSet(c, w, rec)
			}
		}
		k := 0
		return planFunc(func(told []bool, _ []float64) (int, bool) {
			for k < len(set) && told[set[k]] {
				k++
			}
			if k == len(set) {
				return 0, false
			}
			return set[k], true
		})
	}}
}

// smallestSet returns the smallest set of holding items after which the
// receiver best-responds with action a, nil when there is none.
func smallestSet(c *Claim, w World, a int) []int {
	hold := 0
	for i, h := range w.Holds {
		if h {
			hold |= 1 << i
		}
	}
	best := -1
	for m := hold; ; m = (m - 1) & hold {
		if m != 0 && (best < 0 || bits.OnesCount(uint(m)) < bits.OnesCount(uint(best)) ||
			(bits.OnesCount(uint(m)) == bits.OnesCount(uint(best)) && m < best)) {
			if p, err := c.Posterior(maskItems(m)); err == nil && c.BestResponse(p) == a {
				best = m
			}
		}
		if m == 0 {
			break
		}
	}
	if best < 0 {
		return nil
	}
	return maskItems(best)
}

func maskItems(m int) []int {
	var out []int
	for i := 0; m != 0; i++ {
		if m&1 != 0 {
			out = append(out, i)
		}
		m >>= 1
	}
	return out
}

// Sender is an episode.Persuader playing a Strategy in one World: in the
// static setting its single utterance discloses the whole plan; in the
// dynamic setting each utterance discloses the plan's next item, and an
// utterance with nothing left says so. It follows the Bayesian receiver's
// belief as it would update (the model is common knowledge).
type Sender struct {
	S      Strategy
	C      *Claim
	W      World
	Static bool
}

// Name implements episode.Persuader.
func (s *Sender) Name() string { return s.S.Name() }

// Start implements episode.Persuader; the public scenario is not needed
// (the claim carries it).
func (s *Sender) Start(_ context.Context, _ scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &senderSession{s: s, plan: s.S.Begin(s.C, s.W, rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))),
		told: make([]bool, len(s.C.Evidence)), post: append([]float64(nil), s.C.Prior...)}, nil
}

type senderSession struct {
	s    *Sender
	plan Plan
	told []bool
	post []float64
}

// Say implements episode.PersuaderSession.
func (ss *senderSession) Say(context.Context, []episode.Message) (episode.Utterance, error) {
	var items []int
	for {
		i, ok := ss.plan.Next(ss.told, ss.post)
		if !ok {
			break
		}
		if i < 0 || i >= len(ss.told) || ss.told[i] || !ss.s.W.Holds[i] {
			return episode.Utterance{}, fmt.Errorf("bayes sender %s: plan chose item %d, which is not a holding untold item", ss.s.S.Name(), i)
		}
		ss.told[i] = true
		if p, err := ss.s.C.PosteriorFrom(ss.post, []int{i}); err == nil {
			ss.post = p
		}
		items = append(items, i)
		if !ss.s.Static {
			break
		}
	}
	return episode.Utterance{Text: DisclosureText(ss.s.C, items)}, nil
}

// DisclosureText is how built-in senders word a disclosure: each item as
// "[id] text", or a closing line when items is empty.
func DisclosureText(c *Claim, items []int) string {
	if len(items) == 0 {
		return "I have nothing more to add; the decision is yours."
	}
	var b strings.Builder
	b.WriteString("Here is what I can show you about the claim that " + strings.TrimSuffix(lowerFirst(c.Text), ".") + ".")
	for _, i := range items {
		fmt.Fprintf(&b, " [%s] %s", c.Evidence[i].ID, c.Evidence[i].Text)
	}
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
