package study

// The fixed-sequence study: how far a reply-blind persuader gets. A
// persuadee whose types ask for different strategies, and whose people
// differ, rewards a persuader that reads the replies; if one act sequence
// played whatever the persuadee says does about as well as anything, the
// simulator is a soft user (docs/simulator/types.md).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/tagger"
)

// Seq is a fixed act sequence: the act set of each persuader turn, in
// order; each set is a non-empty subset of the five acts (the planner's
// action space, planner.NumActions).
type Seq []tagger.ActSet

// String spells s as its turns joined by " > ", each turn its acts'
// initials in tagger.Acts order joined by "+" ("d > e+p > a+c"):
// d diagnostic, e evidence, p plan, c commitment, a autonomy.
func (s Seq) String() string {
	parts := make([]string, len(s))
	for i, a := range s {
		var b []string
		for _, act := range tagger.Acts {
			if a.Has(act) {
				b = append(b, act.String()[:1])
			}
		}
		parts[i] = strings.Join(b, "+")
	}
	return strings.Join(parts, " > ")
}

// ParseSeq reads a sequence as Seq.String spells it ("d > e+p > c+a"):
// turns joined by ">", each turn act initials joined by "+", in any order,
// spaces ignored. Errors: an empty sequence or turn, an unknown initial, or
// an act given twice in one turn.
func ParseSeq(text string) (Seq, error) {
	var out Seq
	for i, turn := range strings.Split(text, ">") {
		var a tagger.ActSet
		for _, c := range strings.Split(strings.TrimSpace(turn), "+") {
			c = strings.TrimSpace(c)
			k := slices.IndexFunc(tagger.Acts, func(act tagger.Act) bool { return act.String()[:1] == c })
			switch {
			case c == "":
				return nil, fmt.Errorf("sequence %q: turn %d: an empty act", text, i+1)
			case k < 0:
				return nil, fmt.Errorf("sequence %q: turn %d: no act %q (d, e, p, c, a)", text, i+1, c)
			case a.Has(tagger.Acts[k]):
				return nil, fmt.Errorf("sequence %q: turn %d: act %q twice", text, i+1, c)
			}
			a = a.With(tagger.Acts[k])
		}
		out = append(out, a)
	}
	return out, nil
}

// FixedPersuader is a reply-blind persuader: at turn t it plays Seq[t]
// (the last set again past the end), worded by baseline.Realise, the
// built-in template phrasing the planner uses, from the public scenario
// and a transcript whose persuadee messages are blanked, so that no word
// of any reply can reach its utterance.
type FixedPersuader struct{ Seq Seq }

// Name returns "fixed:" and the sequence (Seq.String).
func (f FixedPersuader) Name() string { return "fixed:" + f.Seq.String() }

// Start begins a session on pub; it fails when Seq is empty.
func (f FixedPersuader) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	if len(f.Seq) == 0 {
		return nil, errors.New("study: fixed persuader with an empty sequence")
	}
	return &fixedSession{seq: f.Seq, pub: pub, seed: seed}, nil
}

type fixedSession struct {
	seq  Seq
	pub  scenario.Public
	seed uint64
	// blind is the transcript as the session sees it: every persuadee
	// message with its text removed.
	blind []episode.Message
}

// Say realises the current turn's act set; only the count of persuader
// turns in transcript is read.
func (s *fixedSession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	s.blind = s.blind[:0]
	t := 0
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			t++
			s.blind = append(s.blind, m)
		} else {
			s.blind = append(s.blind, episode.Message{Speaker: m.Speaker})
		}
	}
	return baseline.Realise(s.pub, s.seq[min(t, len(s.seq)-1)], s.blind, s.seed)
}

// TypeScore is one persuader's outcome on one group of scenarios.
type TypeScore struct {
	// N is the number of episodes.
	N int `json:"n"`
	// Accept is the share (in [0, 1]) of episodes ending in Accept, Moved
	// that of episodes with a readable B_T above eval.MovedThreshold among
	// those with one.
	Accept float64 `json:"accept"`
	Moved  float64 `json:"moved"`
	// BT is the mean final belief B_T over the episodes with one (all of
	// the simulator's).
	BT float64 `json:"b_t"`
	// nBT counts the episodes with a readable B_T while tallying.
	nBT int
}

// Score is a persuader's outcome over all scenarios (All) and per
// resistance type (By, in scenario.Resistances order: EB, IT, AR, AA).
type Score struct {
	All TypeScore    `json:"all"`
	By  [4]TypeScore `json:"by_type"`
}

// FixedOptions configures FixedStudy.
type FixedOptions struct {
	// Scenarios are the scenarios every sequence plays (one episode each
	// per rollout).
	Scenarios []scenario.Scenario
	// Persuadee is the persuadee under study.
	Persuadee episode.Persuadee
	// Tmax is the longest sequence searched (default episode.DefaultTmax);
	// a sequence of length k plays episodes of at most k turns.
	Tmax int
	// Beam is the number of prefixes kept per objective and length
	// (default 3).
	Beam int
	// Refine is the number of polishing passes after the beam (0: the
	// default 4; negative: none): each objective's best sequence, and its
	// best uniform one, has each turn in turn replaced by every other
	// candidate or dropped, then two turns swapped, the best kept
	// (FixedStudy).
	Refine int
	// Candidates are the act sets a turn may hold (default all 31
	// non-empty subsets of the five acts).
	Candidates []tagger.ActSet
	// Starts are sequences of the caller's (at most Tmax turns each)
	// played, and with Refine > 0 polished for every objective, beside
	// the search's own starts: a candidate a researcher wants checked, or
	// the best found by another run.
	Starts []Seq
	// Baselines are reply-reading persuaders scored on the same episodes
	// (Tmax turns), for comparison (random's AA row, for example).
	Baselines []episode.Persuader
	// Test are scenarios the best sequences and the baselines are scored
	// on after the search, never searched on (an out-of-sample check);
	// none when empty.
	Test []scenario.Scenario
	// Seed is the run seed; episode seeds are episode.Seed(Seed, id, r).
	Seed uint64
	// Rollouts per scenario (default 1).
	Rollouts int
	// Fresh is the number of fresh rollouts per searched scenario
	// (rollout indices Rollouts to Rollouts+Fresh−1: other persons of the
	// same scenarios, and other reply noise, never searched on) on which
	// each objective's best sequence, the baselines and the type oracle
	// are scored again after the search; 0: none. A search over
	// thousands of sequences on one draw of persons keeps the sequences
	// that draw favours, so the best's searched acceptance is biased
	// upward (the winner's curse; over n episodes a sequence's acceptance
	// p has a binomial standard error of sqrt(p(1−p)/n), about 3 pp for
	// the 240 held-out scenarios and one rollout);
	// its fresh acceptance is an unbiased estimate of what it wins on
	// these scenarios' persons.
	Fresh int
	// Workers bounds concurrent episodes (default 1); results do not
	// depend on it.
	Workers int
}

// Objective names what a search maximises: full acceptance over all
// scenarios ("all") or over one resistance type's.
var Objectives = []string{"all", "EB", "IT", "AR", "AA"}

// Scored is a sequence with its score.
type Scored struct {
	Seq   Seq    `json:"-"`
	Name  string `json:"seq"`
	Score Score  `json:"score"`
}

// FixedResult is what FixedStudy found.
type FixedResult struct {
	// Best holds, per objective (Objectives order), the best sequence
	// found: the highest acceptance on the objective's scenarios, ties
	// broken by higher mean B_T, then shorter, then Seq.String order.
	Best []Scored `json:"best"`
	// Baselines are the scores of FixedOptions.Baselines, by name.
	Baselines []Scored `json:"baselines"`
	// Evaluated counts the distinct sequences played.
	Evaluated int `json:"evaluated"`
	// Types counts the scenarios of each type (EB, IT, AR, AA).
	Types [4]int `json:"types"`
	// Test holds, with FixedOptions.Test, each objective's best sequence
	// (Best, same order) scored on the test scenarios, TestBaselines the
	// baselines there and TestTypes their count per type; empty without.
	Test          []Scored `json:"test,omitempty"`
	TestBaselines []Scored `json:"test_baselines,omitempty"`
	TestTypes     [4]int   `json:"test_types"`
	// TypeOracle is the full acceptance, in [0, 1], of a persuader told
	// each persuadee's resistance type that plays that type's best
	// sequence (Best[1:]) on it, over the searched scenarios; TestTypeOracle
	// the same on the test scenarios (0 without). Against Best[0] it
	// prices what identifying the type from the replies can pay a
	// reply-blind plan; on the searched scenarios it is an optimistic
	// bound (each type's best was chosen on them), on the test ones not.
	TypeOracle     float64 `json:"type_oracle"`
	TestTypeOracle float64 `json:"test_type_oracle"`
	// Fresh holds, with FixedOptions.Fresh > 0, each objective's best
	// sequence (Best, same order) scored on the fresh rollouts of the
	// searched scenarios, FreshBaselines the baselines there, and
	// FreshTypeOracle the type oracle there (0 without); FreshRollouts
	// is FixedOptions.Fresh.
	Fresh           []FreshScored `json:"fresh,omitempty"`
	FreshBaselines  []FreshScored `json:"fresh_baselines,omitempty"`
	FreshTypeOracle float64       `json:"fresh_type_oracle"`
	FreshRollouts   int           `json:"fresh_rollouts"`
}

// FreshScored is a sequence's or a baseline's score on fresh rollouts
// (FixedOptions.Fresh) with AcceptCI, the 95 % percentile-bootstrap
// interval (10,000 resamples of the scenarios, each bringing all of its
// rollouts; bootstrap seed 1) of its full acceptance over all types, a
// share in [0, 1].
type FreshScored struct {
	Scored
	AcceptCI [2]float64 `json:"accept_ci"`
}

// typeOracle is the acceptance, over all scenarios, of each type's best
// sequence (best[1:], Objectives order) played on its own type, whose
// scenarios number types (FixedResult.TypeOracle); 0 without scenarios.
func typeOracle(best []Scored, types [4]int) float64 {
	if len(best) != len(Objectives) {
		return 0
	}
	var won, n float64
	for k, m := range types {
		won += best[k+1].Score.By[k].Accept * float64(m)
		n += float64(m)
	}
	if n == 0 {
		return 0
	}
	return won / n
}

// objValue returns s's acceptance and mean B_T on objective o (index
// into Objectives).
func objValue(s *Score, o int) (acc, bt float64) {
	t := &s.All
	if o > 0 {
		t = &s.By[o-1]
	}
	return t.Accept, t.BT
}

// better reports whether a ranks above b on objective o (see
// FixedResult.Best).
func better(a, b *Scored, o int) bool {
	aa, ab := objValue(&a.Score, o)
	ba, bb := objValue(&b.Score, o)
	if aa != ba {
		return aa > ba
	}
	// B_T to 1e-9: sums of the same beliefs in another order may differ
	// in the last bits
	if ab, bb := math.Round(ab*1e9), math.Round(bb*1e9); ab != bb {
		return ab > bb
	}
	if len(a.Seq) != len(b.Seq) {
		return len(a.Seq) < len(b.Seq)
	}
	return a.Name < b.Name
}

// prefixValue ranks prefixes for the beam: acceptance plus mean B_T on
// objective o. Choice: a prefix that has not asked yet accepts nothing,
// so acceptance alone cannot tell prefixes apart; the belief it has
// built is what a later ask can convert.
func prefixValue(s *Score, o int) float64 {
	acc, bt := objValue(s, o)
	return acc + bt
}

// FixedStudy searches fixed act sequences of length 1..Tmax for the best
// per objective (Objectives) by beam search: every one-turn sequence is
// played; at each length, for every objective, the Beam prefixes with the
// highest prefixValue are extended by every candidate act set, and the
// union of extensions is played. The best sequence of any length is kept
// per objective. With Beam × len(Objectives) prefixes of 31 extensions,
// Tmax 10 plays at most 31 + 9·15·31 = 4,216 sequences. With Refine > 0
// the uniform sequences (one ask-free candidate every turn, the ask added
// to it in the last) are played too. Then, objective by objective, the
// best found so far, and the best uniform sequence, are each polished by
// coordinate ascent (Refine passes, or until a pass changes nothing):
// turn by turn, every other candidate act set in that turn, and the turn
// dropped, are played, then every swap of two turns, and the best of
// them replaces the sequence when it ranks above it (better); at most
// Refine·(Tmax·len(Candidates) + Tmax·(Tmax−1)/2) more sequences per
// start. A sequence played while polishing one objective may become the
// best of another already polished; it is kept as found.
//
// Choice: the beam ranks prefixes by what they have built so far
// (prefixValue), so it prunes sequences whose early turns pay off only
// later (plan turns an avoider needs before any ask); the uniform starts
// and the polish reach some of those. It is still a local search: a best
// sequence is the best found, a lower bound on the best there is. Search is
// deterministic: episodes are seeded per scenario and ranked with total
// ties (better). The caller's Starts are played and polished beside the
// search's own. After the search the bests and baselines are scored on
// the Test scenarios and on Fresh rollouts of the searched ones.
// Errors: no scenarios, no persuadee, Fresh < 0, a start of no turns
// or more than Tmax or with an act set outside the five acts, a scenario of an
// unknown type, ctx's error, or a failed episode's error.
func FixedStudy(ctx context.Context, o FixedOptions) (*FixedResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	res := &FixedResult{}
	kinds, err := kindsOf(o.Scenarios, &res.Types)
	if err != nil {
		return nil, err
	}
	testKinds, err := kindsOf(o.Test, &res.TestTypes)
	if err != nil {
		return nil, err
	}
	sr := &search{ctx: ctx, o: &o, kinds: kinds, seen: map[string]*Scored{}, best: make([]*Scored, len(Objectives))}
	if err := sr.beam(); err != nil {
		return nil, err
	}
	if err := sr.polishAll(); err != nil {
		return nil, err
	}
	res.Evaluated = len(sr.seen)
	for _, b := range sr.best {
		res.Best = append(res.Best, *b)
	}
	for _, per := range o.Baselines {
		sc, err := scoreOf(ctx, o, kinds, per, o.Tmax)
		if err != nil {
			return nil, err
		}
		res.Baselines = append(res.Baselines, Scored{Name: per.Name(), Score: sc})
	}
	if err := scoreTest(ctx, o, testKinds, res); err != nil {
		return nil, err
	}
	res.TypeOracle = typeOracle(res.Best, res.Types)
	res.TestTypeOracle = typeOracle(res.Test, res.TestTypes)
	if err := scoreFresh(ctx, o, kinds, res); err != nil {
		return nil, err
	}
	return res, nil
}

// defaults fills o's zero fields with FixedStudy's defaults and checks the
// rest. Errors: no scenarios or persuadee, a negative Fresh, a start of
// the wrong length or with an act set outside the acts.
func (o *FixedOptions) defaults() error {
	if len(o.Scenarios) == 0 || o.Persuadee == nil {
		return errors.New("study fixed: no scenarios or no persuadee")
	}
	if o.Tmax <= 0 {
		o.Tmax = episode.DefaultTmax
	}
	if o.Beam <= 0 {
		o.Beam = 3
	}
	if o.Refine == 0 {
		o.Refine = 4
	}
	if o.Rollouts <= 0 {
		o.Rollouts = 1
	}
	if o.Fresh < 0 {
		return fmt.Errorf("study fixed: Fresh %d, want 0 or more", o.Fresh)
	}
	if len(o.Candidates) == 0 {
		for a := tagger.ActSet(1); a < 1<<tagger.NumActs; a++ {
			o.Candidates = append(o.Candidates, a)
		}
	}
	for _, st := range o.Starts {
		if len(st) == 0 || len(st) > o.Tmax {
			return fmt.Errorf("study fixed: start %q: %d turns, want 1 to Tmax %d", st.String(), len(st), o.Tmax)
		}
		for _, a := range st {
			if a == 0 || a >= 1<<tagger.NumActs {
				return fmt.Errorf("study fixed: start %q: act set %#x is not a non-empty subset of the %d acts", st.String(), uint8(a), tagger.NumActs)
			}
		}
	}
	return nil
}

// search is FixedStudy's search over sequences: every sequence played so
// far (seen, by name) and the best one per objective.
type search struct {
	ctx   context.Context
	o     *FixedOptions
	kinds []int
	seen  map[string]*Scored
	best  []*Scored
}

// evalAll plays the sequences not played before and returns every one's
// score (a repeat's from seen), updating the bests.
func (sr *search) evalAll(seqs []Seq) ([]*Scored, error) {
	var out []*Scored
	for _, s := range seqs {
		name := s.String()
		if x, ok := sr.seen[name]; ok {
			out = append(out, x)
			continue
		}
		sc, err := scoreOf(sr.ctx, *sr.o, sr.kinds, FixedPersuader{Seq: s}, len(s))
		if err != nil {
			return nil, err
		}
		x := &Scored{Seq: s, Name: name, Score: sc}
		sr.seen[name] = x
		out = append(out, x)
		for ob := range sr.best {
			if sr.best[ob] == nil || better(x, sr.best[ob], ob) {
				sr.best[ob] = x
			}
		}
	}
	return out, nil
}

// beam plays every candidate act set, then level by level up to Tmax
// extends the o.Beam best prefixes of each objective (by prefixValue) with
// every candidate.
func (sr *search) beam() error {
	o := sr.o
	var level []Seq
	for _, a := range o.Candidates {
		level = append(level, Seq{a})
	}
	for length := 1; ; length++ {
		played, err := sr.evalAll(level)
		if err != nil {
			return err
		}
		if length == o.Tmax {
			return nil
		}
		keep := map[string]*Scored{}
		for ob := range Objectives {
			slices.SortStableFunc(played, func(a, b *Scored) int {
				if c := cmp.Compare(prefixValue(&b.Score, ob), prefixValue(&a.Score, ob)); c != 0 {
					return c
				}
				return strings.Compare(a.Name, b.Name)
			})
			for _, x := range played[:min(o.Beam, len(played))] {
				keep[x.Name] = x
			}
		}
		names := make([]string, 0, len(keep))
		for n := range keep {
			names = append(names, n)
		}
		slices.Sort(names)
		level = level[:0:0]
		for _, n := range names {
			for _, a := range o.Candidates {
				level = append(level, append(slices.Clone(keep[n].Seq), a))
			}
		}
	}
}

// polishAll polishes, for each objective, its best sequence, the given
// starts (o.Starts) and the best uniform sequence: one act set every turn
// and the ask added to it at the end. The beam ranks prefixes by what
// they have built so far and misses sequences that build slowly (the plan
// turns an avoider needs before any ask); a polish from the best such
// uniform sequence finds them.
func (sr *search) polishAll() error {
	o := sr.o
	var uniform []Seq
	if o.Tmax > 1 && o.Refine > 0 {
		for _, a := range o.Candidates {
			if a.Has(tagger.Commitment) || !slices.Contains(o.Candidates, a.With(tagger.Commitment)) {
				continue
			}
			u := make(Seq, o.Tmax)
			for i := range u {
				u[i] = a
			}
			u[o.Tmax-1] = a.With(tagger.Commitment)
			uniform = append(uniform, u)
		}
	}
	us, err := sr.evalAll(uniform)
	if err != nil {
		return err
	}
	own, err := sr.evalAll(o.Starts)
	if err != nil {
		return err
	}
	for ob := range Objectives {
		starts := []*Scored{sr.best[ob]}
		if o.Refine > 0 {
			starts = append(starts, own...)
		}
		var ub *Scored
		for _, u := range us {
			if ub == nil || better(u, ub, ob) {
				ub = u
			}
		}
		if ub != nil && ub != sr.best[ob] {
			starts = append(starts, ub)
		}
		for _, st := range starts {
			if _, err := polish(st, ob, o.Candidates, o.Refine, sr.evalAll); err != nil {
				return err
			}
		}
	}
	return nil
}

// scoreTest scores res's bests and o's baselines on the held-out
// scenarios o.Test (none: nothing), into res.Test and res.TestBaselines.
func scoreTest(ctx context.Context, o FixedOptions, testKinds []int, res *FixedResult) error {
	if len(o.Test) == 0 {
		return nil
	}
	to := o
	to.Scenarios = o.Test
	for _, b := range res.Best {
		sc, err := scoreOf(ctx, to, testKinds, FixedPersuader{Seq: b.Seq}, len(b.Seq))
		if err != nil {
			return err
		}
		res.Test = append(res.Test, Scored{Seq: b.Seq, Name: b.Name, Score: sc})
	}
	for _, per := range o.Baselines {
		sc, err := scoreOf(ctx, to, testKinds, per, o.Tmax)
		if err != nil {
			return err
		}
		res.TestBaselines = append(res.TestBaselines, Scored{Name: per.Name(), Score: sc})
	}
	return nil
}

// scoreFresh scores res's bests and o's baselines again on o.Fresh fresh
// rollouts of the searched scenarios (none: nothing), with the
// acceptance intervals and the type oracle there.
func scoreFresh(ctx context.Context, o FixedOptions, kinds []int, res *FixedResult) error {
	if o.Fresh == 0 {
		return nil
	}
	res.FreshRollouts = o.Fresh
	fresh := func(per episode.Persuader, name string, seq Seq, tmax int) (FreshScored, error) {
		eps, err := playOutcomes(ctx, o, per, tmax, o.Rollouts, o.Fresh)
		if err != nil {
			return FreshScored{}, err
		}
		ci, err := acceptCI(eps, o.Fresh)
		if err != nil {
			return FreshScored{}, fmt.Errorf("study fixed: %s on fresh rollouts: %w", name, err)
		}
		return FreshScored{Scored: Scored{Seq: seq, Name: name, Score: tally(eps, kinds, o.Fresh)}, AcceptCI: ci}, nil
	}
	var plain []Scored
	for _, b := range res.Best {
		x, err := fresh(FixedPersuader{Seq: b.Seq}, b.Name, b.Seq, len(b.Seq))
		if err != nil {
			return err
		}
		res.Fresh = append(res.Fresh, x)
		plain = append(plain, x.Scored)
	}
	for _, per := range o.Baselines {
		x, err := fresh(per, per.Name(), nil, o.Tmax)
		if err != nil {
			return err
		}
		res.FreshBaselines = append(res.FreshBaselines, x)
	}
	res.FreshTypeOracle = typeOracle(plain, res.Types)
	return nil
}

// acceptCI is FreshScored.AcceptCI for eps, rollouts consecutive
// episodes per scenario (playOutcomes order).
func acceptCI(eps []outcome, rollouts int) ([2]float64, error) {
	n := len(eps) / rollouts
	share := make([]float64, n)
	for i, e := range eps {
		if e.acc {
			share[i/rollouts] += 1 / float64(rollouts)
		}
	}
	ci, err := stats.Bootstrap(n, func(idx []int) float64 {
		var sum float64
		for _, i := range idx {
			sum += share[i]
		}
		return sum / float64(len(idx))
	}, stats.BootstrapOptions{Seed: 1})
	if err != nil {
		return [2]float64{}, err
	}
	return [2]float64{ci.Lo, ci.Hi}, nil
}

// kindsOf returns each scenario's index in scenario.Resistances and adds
// one to count per type. Errors: a scenario of an unknown type.
func kindsOf(ss []scenario.Scenario, count *[4]int) ([]int, error) {
	kinds := make([]int, len(ss))
	for i := range ss {
		k := slices.Index(scenario.Resistances, ss[i].Hidden.Resistance)
		if k < 0 {
			return nil, fmt.Errorf("study fixed: scenario %s: unknown resistance %q", ss[i].ID, ss[i].Hidden.Resistance)
		}
		kinds[i] = k
		count[k]++
	}
	return kinds, nil
}

// polish runs up to passes passes of coordinate ascent from start for
// objective ob (see FixedStudy) and returns the best sequence it reached:
// for each turn in order, every other candidate in it and the turn
// dropped are played through evalAll, and the best that ranks above the
// current sequence replaces it; a kept drop moves the next turn to the
// same index, which is then polished too. Then every swap of two turns
// is played the same way: an ask played early and one missing at the
// end are two turns, which a replacement changes only one at a time. It
// stops early after a pass that changed nothing. FixedStudy keeps each
// objective's best through evalAll, which sees every sequence played
// (a polish for one objective can find another's best); the returned
// best is the ascent's own. Errors: evalAll's.
func polish(start *Scored, ob int, cands []tagger.ActSet, passes int, evalAll func([]Seq) ([]*Scored, error)) (*Scored, error) {
	cur := start
	climb := func(alts []Seq) error {
		xs, err := evalAll(alts)
		for _, x := range xs {
			if better(x, cur, ob) {
				cur = x
			}
		}
		return err
	}
	for range max(passes, 0) {
		from := cur
		for i := 0; i < len(cur.Seq); i++ {
			base := cur.Seq
			var alts []Seq
			for _, a := range cands {
				if a != base[i] {
					alts = append(alts, append(slices.Clone(base[:i]), append(Seq{a}, base[i+1:]...)...))
				}
			}
			if len(base) > 1 {
				alts = append(alts, append(slices.Clone(base[:i]), base[i+1:]...))
			}
			if err := climb(alts); err != nil {
				return cur, err
			}
			if len(cur.Seq) < len(base) {
				i-- // turn i was dropped: the next turn is now at i
			}
		}
		base := cur.Seq
		var swaps []Seq
		for i := range base {
			for j := i + 1; j < len(base); j++ {
				if base[i] != base[j] {
					x := slices.Clone(base)
					x[i], x[j] = x[j], x[i]
					swaps = append(swaps, x)
				}
			}
		}
		if err := climb(swaps); err != nil {
			return cur, err
		}
		if cur == from {
			break
		}
	}
	return cur, nil
}

// scoreOf plays per on every scenario and rollout of o with at most tmax
// turns and tallies the outcomes.
func scoreOf(ctx context.Context, o FixedOptions, kinds []int, per episode.Persuader, tmax int) (Score, error) {
	eps, err := playOutcomes(ctx, o, per, tmax, 0, o.Rollouts)
	if err != nil {
		return Score{}, err
	}
	return tally(eps, kinds, o.Rollouts), nil
}

// outcome is one episode's result as FixedStudy counts it.
type outcome struct {
	acc, moved, hasBT bool
	bt                float64
}

// playOutcomes plays per on every scenario of o, rollouts episodes each
// with rollout indices r0 to r0+rollouts−1 (episode.Seed(o.Seed, id, r)),
// at most tmax turns, and returns the outcomes scenario by scenario, a
// scenario's rollouts consecutive. Errors: ctx's, an episode's, or a
// failed episode.
func playOutcomes(ctx context.Context, o FixedOptions, per episode.Persuader, tmax, r0, rollouts int) ([]outcome, error) {
	cfg := episode.Config{Tmax: tmax}
	return parallel.Map(ctx, len(o.Scenarios)*rollouts, max(o.Workers, 1), func(ctx context.Context, i int) (outcome, error) {
		sc := &o.Scenarios[i/rollouts]
		ep, err := episode.Run(ctx, cfg, sc, per, o.Persuadee, episode.Seed(o.Seed, sc.ID, r0+i%rollouts))
		if err != nil {
			return outcome{}, err
		}
		if ep.Terminal == decision.TermFailed {
			return outcome{}, fmt.Errorf("study fixed: %s on %s: %s", per.Name(), sc.ID, ep.Error)
		}
		b, ok := ep.FinalBelief()
		return outcome{acc: ep.Terminal == decision.TermAccept, moved: ok && b > eval.MovedThreshold, hasBT: ok, bt: b}, nil
	})
}

// tally is the Score of eps (playOutcomes order, rollouts per scenario),
// kinds giving each scenario's type index.
func tally(eps []outcome, kinds []int, rollouts int) Score {
	var s Score
	add := func(t *TypeScore, e outcome) {
		t.N++
		if e.acc {
			t.Accept++
		}
		if e.moved {
			t.Moved++
		}
		if e.hasBT {
			t.nBT++
			t.BT += e.bt
		}
	}
	for i, e := range eps {
		add(&s.All, e)
		add(&s.By[kinds[i/rollouts]], e)
	}
	norm := func(t *TypeScore) {
		if t.N > 0 {
			t.Accept /= float64(t.N)
		}
		if t.nBT > 0 {
			f := float64(t.nBT)
			t.Moved, t.BT = t.Moved/f, t.BT/f
		}
	}
	norm(&s.All)
	for k := range s.By {
		norm(&s.By[k])
	}
	return s
}

// Losses returns, for each type k (EB, IT, AR, AA), how many other types
// j lose at least margin acceptance (a share, 0.10 for 10 pp) when they
// get type k's best sequence instead of their own:
// acc_j(best_j) − acc_j(best_k) ≥ margin. Types without scenarios count
// as no loss. r.Best must be in Objectives order; all zero when it does
// not hold one sequence per objective.
func (r *FixedResult) Losses(margin float64) [4]int {
	var sc []Score
	for _, b := range r.Best {
		sc = append(sc, b.Score)
	}
	return losses(sc, r.Types, margin)
}

// FreshLosses is Losses with every acceptance read on the fresh rollouts
// (r.Fresh): the same bests, chosen on the searched persons, scored on
// others; zero without fresh rollouts.
func (r *FixedResult) FreshLosses(margin float64) [4]int {
	var sc []Score
	for _, b := range r.Fresh {
		sc = append(sc, b.Score)
	}
	return losses(sc, r.Types, margin)
}

// losses is Losses for best, the bests' scores in Objectives order; zero
// when best does not hold one per objective.
func losses(best []Score, types [4]int, margin float64) [4]int {
	var n [4]int
	if len(best) != len(Objectives) {
		return n
	}
	for k := range 4 {
		for j := range 4 {
			if j == k || types[j] == 0 {
				continue
			}
			own := best[j+1].By[j].Accept
			if own-best[k+1].By[j].Accept >= margin-1e-12 {
				n[k]++
			}
		}
	}
	return n
}

// WriteMarkdown writes r as Markdown tables: each objective's best
// sequence with its acceptance per type, moved share and mean B_T; the
// baselines the same way; per type the number of other types that lose at
// least 10 pp with its best sequence; with test scenarios, the same
// sequences and baselines scored there; and with fresh rollouts, the
// same on those, with an interval for the acceptance over all types.
func (r *FixedResult) WriteMarkdown(w io.Writer) error {
	pct := func(v float64) string { return fmt.Sprintf("%.1f", 100*v) }
	var b strings.Builder
	fmt.Fprintf(&b, "Scenarios: EB %d, IT %d, AR %d, AA %d; %d sequences played.\n\n", r.Types[0], r.Types[1], r.Types[2], r.Types[3], r.Evaluated)
	// table writes the bests (Objectives order) and the baselines, with
	// each row's acceptance interval when cis is not nil (bests, then
	// baselines), then, when there is a best per objective, the types'
	// losses l (when not nil; where qualifies them) and the type oracle.
	table := func(best, base []Scored, cis [][2]float64, l *[4]int, where string, told float64) {
		if cis == nil {
			b.WriteString("| best for | sequence | acc% all | moved% all | B_T all | acc% EB | acc% IT | acc% AR | acc% AA |\n|---|---|---|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("| best for | sequence | acc% all | 95% CI | moved% all | B_T all | acc% EB | acc% IT | acc% AR | acc% AA |\n|---|---|---|---|---|---|---|---|---|---|\n")
		}
		row := func(i int, label string, x *Scored) {
			s := &x.Score
			ci := ""
			if cis != nil {
				ci = fmt.Sprintf(" [%s, %s] |", pct(cis[i][0]), pct(cis[i][1]))
			}
			fmt.Fprintf(&b, "| %s | %s | %s |%s %s | %.2f | %s | %s | %s | %s |\n", label, x.Name, pct(s.All.Accept), ci, pct(s.All.Moved), s.All.BT,
				pct(s.By[0].Accept), pct(s.By[1].Accept), pct(s.By[2].Accept), pct(s.By[3].Accept))
		}
		for i := range best {
			row(i, Objectives[i], &best[i])
		}
		for i := range base {
			row(len(best)+i, "(baseline)", &base[i])
		}
		if len(best) != len(Objectives) {
			return
		}
		if l != nil {
			fmt.Fprintf(&b, "\nOther types losing ≥ 10 pp acceptance with a type's best sequence%s: EB %d, IT %d, AR %d, AA %d.\n", where, l[0], l[1], l[2], l[3])
		} else {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Told each persuadee's type, playing that type's best sequence: %s %% full acceptance, against %s %% for the best single sequence.\n",
			pct(told), pct(best[0].Score.All.Accept))
	}
	l := r.Losses(0.10)
	table(r.Best, r.Baselines, nil, &l, "", r.TypeOracle)
	if len(r.Test) > 0 {
		fmt.Fprintf(&b, "\nThe same sequences on the test scenarios (EB %d, IT %d, AR %d, AA %d), never searched on:\n\n", r.TestTypes[0], r.TestTypes[1], r.TestTypes[2], r.TestTypes[3])
		table(r.Test, r.TestBaselines, nil, nil, "", r.TestTypeOracle)
	}
	if len(r.Fresh) > 0 {
		fmt.Fprintf(&b, "\nThe same sequences on fresh persons of the searched scenarios (%d rollouts each, never searched on; 95 %% scenario-bootstrap interval of acc%% all):\n\n", r.FreshRollouts)
		var best, base []Scored
		var cis [][2]float64
		for _, x := range r.Fresh {
			best, cis = append(best, x.Scored), append(cis, x.AcceptCI)
		}
		for _, x := range r.FreshBaselines {
			base, cis = append(base, x.Scored), append(cis, x.AcceptCI)
		}
		fl := r.FreshLosses(0.10)
		table(best, base, cis, &fl, ", on the fresh persons", r.FreshTypeOracle)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
