package baseline

import (
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Realise writes one persuader utterance that carries exactly the acts in
// acts, for a planner that chooses acts and leaves the wording to the
// built-in template banks (the Probe-RPO paper's Figure 5 five acts; PPDPP-style
// planner + realiser). pub is the public scenario view, transcript the
// visible conversation so far (its last message is normally the
// persuadee's latest reply) and seed the session seed; the result is a
// pure function of the three and acts.
//
// One sentence per act, statements first and questions last (evidence,
// plan, autonomy, diagnostic question, commitment ask), the k-th turn
// taking each bank's k-th template of the session's seeded deck, as the
// random persuader does. Evidence, plan and diagnostic sentences echo up to
// two content phrases the persuadee voiced: first those new in the latest
// reply, then earlier ones no persuader turn has echoed yet (latest first).
// Choice: echoing is the realiser's job, not the planner's: the planner
// picks acts; which of the persuadee's words to answer is read from the
// transcript the way the script persuader reads it.
//
// The returned Utterance.Acts lists acts, and tagger.Tag(Text).Acts equals
// acts with no pressure markers (compose retries with neutral fills and
// other templates until it does; TestRealiseTagsExactly checks all 31
// sets).
//
// Errors: an empty set or one with bits beyond the five acts.
func Realise(pub scenario.Public, acts tagger.ActSet, transcript []episode.Message, seed uint64) (episode.Utterance, error) {
	if acts == 0 || acts >= 1<<tagger.NumActs {
		return episode.Utterance{}, fmt.Errorf("persuader: realise: act set %#x is not a non-empty subset of the %d acts", uint8(acts), tagger.NumActs)
	}
	b := newBase(pub, seed, true)
	t := turnIndex(transcript)
	x := joinPhrases(echoPhrases(b.f, transcript, 2))
	parts := make([]part, 0, tagger.NumActs)
	for _, o := range randomOrder {
		if !acts.Has(o.act) {
			continue
		}
		bank := o.bank
		if x != "" {
			switch bank {
			case bEvid:
				bank = bEvidEcho
			case bPlan:
				bank = bPlanEcho
			case bDiag:
				bank = bDiagEcho
			}
		}
		parts = append(parts, part{bank, t})
	}
	return b.compose(parts, x), nil
}

// echoPhrases returns up to n phrases to echo: those new in the
// transcript's latest persuadee reply (when it is the last message), then
// earlier voiced phrases that no later persuader message contains, latest
// first. Phrases are extracted as the script does (extract), each reply
// against the persuader turn it answers.
func echoPhrases(f fill, transcript []episode.Message, n int) []phrase {
	type voicedAt struct {
		p   phrase
		msg int
	}
	seen := map[string]bool{}
	var voiced []voicedAt
	own := ""
	for i, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			own = m.Text
			continue
		}
		for _, p := range extract(m.Text, seen, stopSet{words: f.stop, own: words(own)}, 2) {
			seen[p.key] = true
			voiced = append(voiced, voicedAt{p, i})
		}
	}
	last := len(transcript) - 1
	var out []phrase
	for _, v := range voiced {
		if v.msg == last && len(out) < n {
			out = append(out, v.p)
		}
	}
	for k := len(voiced) - 1; k >= 0 && len(out) < n; k-- {
		v := voiced[k]
		if v.msg == last || echoedAfter(transcript, v.msg, v.p.text) {
			continue
		}
		out = append(out, v.p)
	}
	return out
}

// echoedAfter reports whether a persuader message after index i contains
// text (case-insensitive).
func echoedAfter(transcript []episode.Message, i int, text string) bool {
	text = strings.ToLower(text)
	for _, m := range transcript[i+1:] {
		if m.Speaker == episode.PersuaderSpeaker && strings.Contains(strings.ToLower(m.Text), text) {
			return true
		}
	}
	return false
}
