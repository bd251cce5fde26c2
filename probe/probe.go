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

// Resolve returns the basis a --probes value names: "" or "default" is
// Default (CA/PE/AC, Probe-RPO paper Table 1), "agreement" is
// AgreementBasis, anything else a JSON file read by LoadBasis (write
// ./default to read a file of that name). Errors: LoadBasis's.
func Resolve(ref string) (Basis, error) {
	switch ref {
	case "", "default":
		return Default, nil
	case "agreement":
		return AgreementBasis, nil
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
}

// Answer is the raw first-token distribution an engine returned for one probe.
type Answer struct {
	Top []TokenLogprob `json:"top"`
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
// Yes or No mass gives a Reading with OK false and the answer's Reason.
func Read(id string, a Answer) Reading {
	y, n := Pool(a)
	p, err := Share(y, n)
	if err != nil {
		return Reading{Probe: id, Reason: a.Reason}
	}
	return Reading{Probe: id, P: p, OK: true}
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
