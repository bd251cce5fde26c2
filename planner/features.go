package planner

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/tagger"
)

// FeatureVersion is the version of the feature layout FeatureSpec.Features
// writes; a checkpoint with another version is refused.
const FeatureVersion = 1

// FeatureSpec fixes the planner's observation vector. It is stored in
// every checkpoint, so a policy is always fed the layout it was trained
// on.
//
// The vector, in order (every entry in [0, 1]):
//
//   - turn: Tmax one-hot entries for the 0-based index of the turn about to
//     be said (turns at or past Tmax-1 use the last entry);
//   - acts so far: for each of the five acts (tagger.Acts order) whether
//     any earlier persuader turn carried it, then min(count, 4)/4, then
//     whether the previous turn carried it (15 entries; acts are read with
//     tagger.Tag from the persuader's own visible turns);
//   - last reaction: the NumReactions flags of TagReaction on the latest
//     persuadee reply (all 0 before the first reply);
//   - concerns: min(voiced, 4)/4, min(addressed, 4)/4, [open > 0],
//     min(open, 3)/3, where voiced counts replies tagged Voiced and
//     addressed those whose content words a later persuader turn repeats
//     (an estimate from the visible transcript: see concernCounts);
//   - optionally BowDims hashed bag-of-words presence flags of the latest
//     reply (FNV-1a of each lower-case word modulo BowDims).
//
// No entry reads hidden data: the input is the visible transcript only.
type FeatureSpec struct {
	// Version is FeatureVersion.
	Version int `json:"version"`
	// Tmax is the number of turn one-hot entries, >= 1 (Probe-RPO paper: 10).
	Tmax int `json:"tmax"`
	// BowDims is the size of the hashed bag of words, >= 0 (0 = none).
	BowDims int `json:"bow_dims"`
}

// DefaultFeatureSpec returns version FeatureVersion, Tmax 10 and no bag of
// words. Choice: the bag of words is off by default; the hand-made
// features carry what the simulator reacts to, and a 16-32 entry hash
// mostly adds noise at CI-sized training budgets.
func DefaultFeatureSpec() FeatureSpec {
	return FeatureSpec{Version: FeatureVersion, Tmax: episode.DefaultTmax}
}

// Validate checks the fields' ranges.
func (s FeatureSpec) Validate() error {
	switch {
	case s.Version != FeatureVersion:
		return fmt.Errorf("feature spec version %d, this build reads %d", s.Version, FeatureVersion)
	case s.Tmax < 1 || s.Tmax > 1000:
		return fmt.Errorf("feature spec tmax = %d, want 1..1000", s.Tmax)
	case s.BowDims < 0 || s.BowDims > 4096:
		return fmt.Errorf("feature spec bow_dims = %d, want 0..4096", s.BowDims)
	}
	return nil
}

// Dim is the length of the feature vector.
func (s FeatureSpec) Dim() int {
	return s.Tmax + 3*tagger.NumActs + NumReactions + 4 + s.BowDims
}

// Names returns a name for each feature entry, in order (for reports and
// checkpoint readers).
func (s FeatureSpec) Names() []string {
	var out []string
	for t := range s.Tmax {
		out = append(out, fmt.Sprintf("turn=%d", t+1))
	}
	for _, pre := range []string{"used", "count", "last"} {
		for _, a := range tagger.Acts {
			out = append(out, pre+":"+a.String())
		}
	}
	for r := Reaction(0); r < NumReactions; r++ {
		out = append(out, "reaction:"+r.String())
	}
	out = append(out, "concerns:voiced", "concerns:addressed", "concerns:open>0", "concerns:open")
	for b := range s.BowDims {
		out = append(out, fmt.Sprintf("bow:%d", b))
	}
	return out
}

// Features appends the feature vector of the turn about to be said, given
// the visible transcript, to dst[:0] and returns it (len Dim()).
func (s FeatureSpec) Features(dst []float64, transcript []episode.Message) []float64 {
	return s.features(dst, transcript, nil)
}

// taggedTurn is a persuader turn's text and its tagger acts, kept by a
// session so that its earlier turns are not tagged again at every turn.
type taggedTurn struct {
	text string
	acts tagger.ActSet
}

// features is Features with the persuader turns' tags taken from, and
// added to, *memo (turn k at index k; nil tags every turn).
func (s FeatureSpec) features(dst []float64, transcript []episode.Message, memo *[]taggedTurn) []float64 {
	dst = dst[:0]
	for range s.Dim() {
		dst = append(dst, 0)
	}
	x := dst
	var count [tagger.NumActs]int
	var last tagger.ActSet
	t := 0
	reply := ""
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			switch {
			case memo == nil:
				last = tagger.Tag(m.Text).Acts
			case t < len(*memo) && (*memo)[t].text == m.Text:
				last = (*memo)[t].acts
			default:
				last = tagger.Tag(m.Text).Acts
				*memo = append((*memo)[:min(t, len(*memo))], taggedTurn{m.Text, last})
			}
			for a := range tagger.NumActs {
				if last.Has(tagger.Act(a)) {
					count[a]++
				}
			}
			t++
		} else {
			reply = m.Text
		}
	}
	x[min(t, s.Tmax-1)] = 1
	o := s.Tmax
	for a := range tagger.NumActs {
		if count[a] > 0 {
			x[o+a] = 1
		}
		x[o+tagger.NumActs+a] = float64(min(count[a], 4)) / 4
		if last.Has(tagger.Act(a)) {
			x[o+2*tagger.NumActs+a] = 1
		}
	}
	o += 3 * tagger.NumActs
	rs := TagReaction(reply)
	for r := range NumReactions {
		if rs.Has(Reaction(r)) {
			x[o+r] = 1
		}
	}
	o += NumReactions
	voiced, addressed := concernCounts(transcript)
	open := voiced - addressed
	x[o] = float64(min(voiced, 4)) / 4
	x[o+1] = float64(min(addressed, 4)) / 4
	if open > 0 {
		x[o+2] = 1
	}
	x[o+3] = float64(min(open, 3)) / 3
	o += 4
	if s.BowDims > 0 {
		for _, w := range sentWords(strings.ToLower(reply)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			x[o+int(h.Sum32()%uint32(s.BowDims))] = 1
		}
	}
	return dst
}

// concernCounts estimates, from the visible transcript, how many concerns
// the persuadee voiced (replies tagged Voiced) and how many of those were
// answered: a voiced reply counts as addressed when a later persuader turn
// repeats one of its content words (at least four letters, not in
// plainWords). Choice: an echo estimate, since the planner cannot see
// which hidden concern a reply voiced; the template realiser echoes voiced
// phrases, and an LLM persuader that answers a worry usually names it.
func concernCounts(transcript []episode.Message) (voiced, addressed int) {
	for i, m := range transcript {
		if m.Speaker != episode.PersuadeeSpeaker || !TagReaction(m.Text).Has(Voiced) {
			continue
		}
		voiced++
		cw := contentWords(m.Text)
	later:
		for _, p := range transcript[i+1:] {
			if p.Speaker != episode.PersuaderSpeaker {
				continue
			}
			for _, w := range sentWords(strings.ToLower(p.Text)) {
				if cw[w] {
					addressed++
					break later
				}
			}
		}
	}
	return voiced, addressed
}

// contentWords returns the lower-case words of text with at least four
// letters that are not plain words.
func contentWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range sentWords(strings.ToLower(strings.NewReplacer("\u2019", "'").Replace(text))) {
		if len(w) >= 4 && !plainWords[w] && !strings.Contains(w, "'") {
			out[w] = true
		}
	}
	return out
}

// plainWords are common words that say nothing about a concern's topic,
// including the voicing formulas' own words.
var plainWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against also always another anything around away back because
been before being below better between both bring came cannot come coming could does doing done down each either else
even ever every first from give going good have here honestly into just keep know last least less like little long
look made make many maybe mean might more most much must need never next nobody nothing once only other over part
point question quite rather really right said same says should since some something still such sure take tell than
that them then there these they thing things think this those though through time told touches reminds very want
were what when where which while whole will with without would your yours mine frank sticks mention funny asked
asking answer worried worry worries concern concerned bothers bother thinks feel feels hear hold open putting
afraid scared nervous problem issue catch fear hesitant home says actually since real okay well yeah`) {
		plainWords[w] = true
	}
}
