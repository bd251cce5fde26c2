// Package probe implements Probe-RPO's belief read-out (Probe-RPO paper, §3.2
// and Table 1): K yes/no questions asked to the persuadee about itself in a
// discarded fork of its context, whose next-token Yes/No log-probabilities
// give a probe state s_{t,k} in [-1, 1] and a belief B_t in [0, 1].
package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// Probe is one introspective yes/no question, worded so that "Yes" favours
// the persuader (Probe-RPO paper, Table 1).
type Probe struct {
	// ID is a short key such as "ca".
	ID string `json:"id"`
	// Dimension names what it measures, e.g. "cognitive".
	Dimension string `json:"dimension"`
	// Question is asked to the persuadee, in the first person.
	Question string `json:"question"`
}

// Basis is an ordered set of K probes.
type Basis []Probe

// Default is the K = 3 basis of the Probe-RPO paper's Table 1 (CA, PE, AC),
// written in the project's own words.
var Default = Basis{
	{ID: "ca", Dimension: "cognitive (concern-address)", Question: "Has the other person really understood what worries me about this?"},
	{ID: "pe", Dimension: "strategic (persuasion-effectiveness)", Question: "Is the other person making a convincing case, with approaches that suit me?"},
	{ID: "ac", Dimension: "conative (acceptance-shift)", Question: "Am I more open to what they are proposing than I was before?"},
}

// Agreement is the probe of agreement with the proposal: the persuadee's
// belief that what the persuader argues for is right, in [0, 1]. It reads
// what PersuasionTrace's people report after each persuader message (the
// PersuasionTrace paper: belief in a proposition on a slider), where the
// Default basis reads willingness to commit now (Probe-RPO paper).
//
// Choice: one question, asked like the Default probes (P(Yes) of a yes/no
// answer), so an LLM persuadee answers it through its log-probabilities
// and the simulator reads it from its openness (package sim, "agree").
var Agreement = Probe{ID: "agree", Dimension: "agreement with the proposal", Question: "Do I agree with what the other person is arguing for?"}

// AgreementBasis is the one-probe basis {Agreement}: the belief is the
// agreement itself.
var AgreementBasis = Basis{Agreement}

// None is the --probes value of outcome-only episodes: no read-out at all
// (episode.Config.NoProbes), for a persuadee whose engine gives no
// log-probabilities (hosted APIs; the Probe-RPO paper's Table 7 reports
// only full acceptance for such persuadees). Commands that accept it check
// IsNone before Resolve.
const None = "none"

// IsNone reports whether a --probes value is None.
func IsNone(ref string) bool { return ref == None }

// ErrNone is returned by Resolve for None: a command that needs a probe
// basis cannot run outcome-only.
var ErrNone = errors.New("--probes none (outcome-only, no belief read-outs) is accepted by eval only; this command needs probes")

// Resolve returns the basis a --probes value names: "" or "default" is
// Default (CA/PE/AC, Probe-RPO paper Table 1), "agreement" is
// AgreementBasis, anything else a JSON file read by LoadBasis (write
// ./default, ./agreement or ./none to read a file of that name). Errors:
// ErrNone for None, LoadBasis's.
func Resolve(ref string) (Basis, error) {
	switch ref {
	case "", "default":
		return Default, nil
	case "agreement":
		return AgreementBasis, nil
	case None:
		return nil, ErrNone
	}
	return LoadBasis(ref)
}

// LoadBasis reads a basis from a JSON file holding an array of
// {"id", "dimension", "question"} objects. It fails, naming the file and the
// entry, on an empty basis, a missing id or question, or a duplicate id.
func LoadBasis(path string) (Basis, error) {
	raw, err := filelimit.ReadFile(path, filelimit.Probes)
	if err != nil {
		return nil, fmt.Errorf("probe basis: %w", err)
	}
	var b Basis
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("probe basis %s: %w", path, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("probe basis %s: no probes", path)
	}
	seen := map[string]bool{}
	for i, p := range b {
		switch {
		case strings.TrimSpace(p.ID) == "":
			return nil, fmt.Errorf("probe basis %s: [%d].id: missing", path, i)
		case strings.TrimSpace(p.Question) == "":
			return nil, fmt.Errorf("probe basis %s: [%d].question: missing", path, i)
		case seen[p.ID]:
			return nil, fmt.Errorf("probe basis %s: [%d].id: duplicate %q", path, i, p.ID)
		}
		seen[p.ID] = true
	}
	return b, nil
}

// TokenLogprob is one candidate for the probe answer's first token, as an
// engine returns it in its top log-probs.
type TokenLogprob struct {
	// Token is the decoded token text (may carry a leading space or a
	// SentencePiece "▁").
	Token string `json:"token"`
	// ID is the token id, or -1 when the engine does not report ids.
	ID int `json:"id"`
	// Logprob is the natural-log probability. -Inf, NaN, values <= -1e30
	// and the -9999 "below top-k" sentinel all mean ~0 probability.
	Logprob float64 `json:"logprob"`
	// Extra marks the sampled token, added by package llm after the
	// engine's top list because it was not in it (llama-server's pinned
	// "Yes"): its own log-prob is real, but its rank says nothing about the
	// tokens below the list, so it never sets an Answer's floor.
	Extra bool `json:"extra,omitempty"`
}

// Answer is the raw first-token distribution an engine returned for one probe.
type Answer struct {
	Top []TokenLogprob `json:"top"`
	// TopK reports that Top is an engine's top-k list (and perhaps the
	// sampled token, Extra): a token missing from it, or listed with a
	// "below top-k" sentinel, may still carry any probability up to the
	// smallest one listed, its floor. False when Top lists every Yes and No
	// variant the engine was asked about (vLLM's exact token-id read-out)
	// or comes from known probabilities (FromProbability): a variant
	// missing there has no mass. Read bounds a TopK answer that shows only
	// one side (OneSided).
	TopK bool `json:"top_k,omitempty"`
	// Reason, when not empty, says why the answer carries no
	// distribution although the engine answered (e.g. post-sampling
	// probabilities, package llm's ArtefactError); Read copies it to an
	// unreadable Reading.
	Reason string `json:"reason,omitempty"`
}

// Reading is one probe's read-out at one turn.
type Reading struct {
	// Probe is the probe ID.
	Probe string `json:"probe"`
	// P is p_k = P(Yes) / (P(Yes) + P(No)) in [0, 1]; meaningless when !OK.
	P float64 `json:"p"`
	// OK is false when the probe was unreadable (neither Yes nor No had any
	// mass): a missing value, never 0 or 0.5.
	OK bool `json:"ok"`
	// Reason says why an unreadable probe is unreadable when the engine's
	// answer was rejected (Answer.Reason); empty otherwise.
	Reason string `json:"reason,omitempty"`
}

// State returns s_{t,k} = 2 p_k - 1 in [-1, 1] (Probe-RPO paper, Eq. 1).
func State(p float64) float64 { return 2*p - 1 }

// ErrUnreadable is returned by Share when neither Yes nor No carries mass.
var ErrUnreadable = errors.New("probe unreadable: neither Yes nor No in the returned log-probs")

// Share returns p_k = P(Yes) / (P(Yes) + P(No)) (Probe-RPO paper). It returns
// ErrUnreadable when both masses are zero.
func Share(pYes, pNo float64) (float64, error) {
	if !(pYes+pNo > 0) {
		return 0, ErrUnreadable
	}
	return pYes / (pYes + pNo), nil
}

// answerWord classifies a token as "yes", "no" or "" after stripping
// whitespace, SentencePiece/byte-BPE space markers and punctuation and
// folding case, so " Yes", "yes", "YES", "▁Yes" and "ĠYes" pool (docs/engines.md).
func answerWord(tok string) string {
	t := strings.TrimLeft(tok, " \t\n▁Ġ")
	t = strings.TrimRight(t, " \t\n.,!:;")
	switch {
	case strings.EqualFold(t, "yes"):
		return "yes"
	case strings.EqualFold(t, "no"):
		return "no"
	}
	return ""
}

// prob converts a log-prob to a probability, mapping the sentinels of
// docs/engines.md (NaN, -Inf, <= -1e30, -9999) to 0.
func prob(lp float64) float64 {
	switch {
	case math.IsNaN(lp) || lp <= -1e30 || lp == -9999:
		return 0
	case lp > 0: // rounding noise above log(1)
		return 1
	}
	return math.Exp(lp)
}

// Pool sums the probability of every Yes variant and every No variant in a,
// dropping duplicate entries (same token id when known, else same token
// text) that some engines return (docs/engines.md). Masses are in [0, 1].
func Pool(a Answer) (pYes, pNo float64) {
	seenID := map[int]bool{}
	seenTok := map[string]bool{}
	for _, c := range a.Top {
		if c.ID >= 0 {
			if seenID[c.ID] {
				continue
			}
			seenID[c.ID] = true
		} else {
			if seenTok[c.Token] {
				continue
			}
			seenTok[c.Token] = true
		}
		switch answerWord(c.Token) {
		case "yes":
			pYes += prob(c.Logprob)
		case "no":
			pNo += prob(c.Logprob)
		}
	}
	return pYes, pNo
}

// Read pools a probe's answer and returns its Reading; an answer without any
// Yes or No mass gives a Reading with OK false and the answer's Reason. A
// top-k answer (Answer.TopK) with mass on one side only is read by
// OneSided: never p = 1 or 0 from one visible side.
func Read(id string, a Answer) Reading {
	y, n := Pool(a)
	if a.TopK && (y > 0) != (n > 0) {
		return OneSided(id, a, y, n)
	}
	p, err := Share(y, n)
	if err != nil {
		return Reading{Probe: id, Reason: a.Reason}
	}
	return Reading{Probe: id, P: p, OK: true}
}

// OneSidedTolerance is the widest interval, on p in [0, 1], that a top-k
// answer showing only one side may leave for OneSided to read it.
//
// Choice: 0.02, so the value read (the interval's midpoint) is within
// 0.01 of the true p, a tenth of the smallest change the simulator's
// rise-and-fall analysis counts (episode.RiseFallStep is 0.02 on B).
const OneSidedTolerance = 0.02

// OneSided reads a top-k answer (Answer.TopK) whose pooled mass is all on
// one side: y > 0 = n or n > 0 = y (pooled masses, Pool). The missing side
// lies below the answer's floor F, the smallest probability listed among
// the engine's top candidates (Extra entries excluded), so with Yes
// visible p lies in [y/(y+F), 1] (with No visible, in [0, F/(F+n)]). When
// that interval is at most OneSidedTolerance wide, p is its midpoint,
// clamped to [1e-12, 1 - 1e-12] as ReadProbability clamps, so never 0 or
// 1; otherwise, or when no listed candidate gives a floor, the probe is
// unreadable, with a Reason giving the interval. Masses on both sides
// read as their share (Share), none as unreadable.
//
// Choice: the missing side is bounded by one floor, although several of
// its spellings (" No", "no", ...) could each lie below it: the main
// spelling carries nearly all of a side's mass on the models measured
// (docs/engines.md), and the interval stays an honest statement of what
// the list shows.
func OneSided(id string, a Answer, y, n float64) Reading {
	if (y > 0) == (n > 0) { // not one-sided after all
		p, err := Share(y, n)
		if err != nil {
			return Reading{Probe: id, Reason: a.Reason}
		}
		return Reading{Probe: id, P: p, OK: true}
	}
	floor := 0.0
	for _, c := range a.Top {
		if p := prob(c.Logprob); !c.Extra && p > 0 && (floor == 0 || p < floor) {
			floor = p
		}
	}
	seen, missing, v := "Yes", "No", y
	if n > 0 {
		seen, missing, v = "No", "Yes", n
	}
	if floor == 0 {
		return Reading{Probe: id, Reason: fmt.Sprintf("only %s among the returned candidates and no listed probability to bound %s", seen, missing)}
	}
	w := floor / (v + floor) // interval width
	lo, hi := 1-w, 1.0
	if seen == "No" {
		lo, hi = 0, w
	}
	if w > OneSidedTolerance {
		return Reading{Probe: id, Reason: fmt.Sprintf("only %s among the top candidates: %s is below the smallest listed probability %.3g, which leaves p in [%.3f, %.3f]", seen, missing, floor, lo, hi)}
	}
	return Reading{Probe: id, P: min(max((lo+hi)/2, 1e-12), 1-1e-12), OK: true}
}

// Belief returns B_t = mean_k p_k over the readable probes (Probe-RPO paper,
// §3.2), in [0, 1]; equivalently (1 + mean_k s_{t,k}) / 2. ok is false when
// no probe is readable.
//
// Choice: unreadable probes are dropped from the mean rather than imputed;
// the count of readable probes is stored with each turn.
func Belief(rs []Reading) (b float64, ok bool) {
	n := 0
	for _, r := range rs {
		if r.OK {
			b += r.P
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return b / float64(n), true
}

// Common returns the beliefs at t-1 and t over the probes readable in both
// read-outs, prev and cur (matched by Probe id; the same basis gives the
// same order), and how many they are: the beliefs a dense reward r_t =
// B_t - B_{t-1} compares (Probe-RPO paper, §3.2), so that a probe that
// becomes readable or unreadable between the two turns changes neither.
// n is 0 when no probe is readable in both. When every readable probe is
// readable in both, bPrev and bCur are exactly Belief(prev) and
// Belief(cur), bit for bit (the same sums in the same order).
func Common(prev, cur []Reading) (bPrev, bCur float64, n int) {
	for _, c := range cur {
		if !c.OK {
			continue
		}
		for _, q := range prev {
			if q.Probe == c.Probe {
				if q.OK {
					bPrev += q.P
					bCur += c.P
					n++
				}
				break
			}
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return bPrev / float64(n), bCur / float64(n), n
}

// ReadProbability returns the Reading of probe id whose answer puts
// P(Yes) = p on "Yes" and 1 - p on "No": exactly Read(id,
// FromProbability(p)), bit for bit (the same clamping to [1e-12, 1 -
// 1e-12] and the same log/exp round trip), without building the Answer or
// pooling its tokens. The simulator reads its probes through it. p is a
// probability; NaN gives a Reading with OK false, as Read does.
func ReadProbability(id string, p float64) Reading {
	p = min(max(p, 1e-12), 1-1e-12) // as math.Min(math.Max(...)), NaN and signed zeros alike
	p, err := Share(prob(math.Log(p)), prob(math.Log1p(-p)))
	return Reading{Probe: id, P: p, OK: err == nil}
}

// FromProbability builds the Answer a model with P(Yes) = p (and P(No) =
// 1 - p) would return. The simulator uses it so that its read-out flows
// through the same pooling path as an engine's; p is clamped to
// [1e-12, 1 - 1e-12].
func FromProbability(p float64) Answer {
	p = min(max(p, 1e-12), 1-1e-12) // as math.Min(math.Max(...)), NaN and signed zeros alike
	return Answer{Top: []TokenLogprob{
		{Token: "Yes", ID: -1, Logprob: math.Log(p)},
		{Token: "No", ID: -1, Logprob: math.Log1p(-p)},
	}}
}
