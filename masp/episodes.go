package masp

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// This file computes MASP's metrics on stored episodes (episode.Run,
// "persuarena eval"): persuarena eval --metrics masp and compare --metrics
// masp. An episode was not played under the closed-loop protocol, so its
// success and q are read from what the episode stores.

// EpisodeMoveMargin is the belief change the transcript rules treat as a
// real move: |B_t - B_{t-1}| > 0.05.
//
// Choice: half of SimRationalityJudge's 0.1 on openness, since openness
// spans [-1, 1] and the belief B_t spans [0, 1].
const EpisodeMoveMargin = 0.05

// EpisodeOptions configures EpisodeDialogue and EpisodeResults.
type EpisodeOptions struct {
	// Scenarios maps scenario ids to scenarios; the transcript rules read
	// a scenario's concerns and initial stance. A missing id uses the
	// fallbacks of EpisodeRationality.
	Scenarios map[string]*scenario.Scenario
	// Rationality, when set, judges every turn instead of the transcript
	// rules (e.g. an LLMRationalityJudge; it then sees no BDI state, the
	// "unknown" state of its prompt).
	Rationality RationalityJudge
	// Rule is the success rule; zero means DefaultSuccessRule.
	Rule SuccessRule
	// Workers is the number of episodes judged at once; <= 0 means 1.
	// Results do not depend on it.
	Workers int
}

// EpisodeRationality returns q_t and the rule that fired for every turn of a
// stored episode, from its transcript, decisions and beliefs alone (no latent
// state): the transcript version of SimRationalityJudge (MASP paper, Eq. 22,
// Appendix C.2). sc may be nil.
//
// A persuader turn gives a reason when the tagger finds evidence or plan
// detail and no pressure marker, and it mentions one of sc's concerns
// (a keyword by prose.Doc.Mentions; without sc, any turn with evidence or plan and no
// pressure). ΔB_t is Turn.Dense = B_t - B_{t-1} (0 when missing); the user
// started against the proposal when sc's initial stance is < 0 (without
// sc: B_0 < 0.5; unknown B_0: not against).
//
//   - accept or conditional: NOT_RATIONAL under pressure this turn, or
//     when no turn so far gave a reason and the user started against;
//     else RATIONAL.
//   - reject: NOT_RATIONAL when this turn gave a reason, else RATIONAL.
//   - continue: NOT_RATIONAL when the belief fell by more than
//     EpisodeMoveMargin right after a reason, or rose by more than it
//     under pressure; else RATIONAL.
//
// Choice: these rules are the project's (as SimRationalityJudge's);
// "some concern answered so far" becomes "some turn so far gave a reason",
// and the simulator's openness becomes the probed belief.
func EpisodeRationality(ep *episode.Episode, sc *scenario.Scenario) (q []int, raw []string) {
	q, raw = make([]int, len(ep.Turns)), make([]string, len(ep.Turns))
	against := false
	switch {
	case sc != nil:
		against = sc.Hidden.InitialStance < 0
	case ep.B0 != nil:
		against = *ep.B0 < 0.5
	}
	answered := false
	for i, t := range ep.Turns {
		tags := tagger.Tag(t.Persuader)
		press := tags.Pressure > 0
		reason := !press && (tags.Acts.Has(tagger.Evidence) || tags.Acts.Has(tagger.Plan))
		if reason && sc != nil && len(sc.Hidden.Concerns) > 0 {
			reason = mentionsConcern(prose.Parse(t.Persuader), sc.Hidden.Concerns)
		}
		answered = answered || reason
		dB := 0.0
		if t.Dense != nil {
			dB = *t.Dense
		}
		switch t.Decision {
		case decision.Accept, decision.Conditional:
			switch {
			case press:
				q[i], raw[i] = NotRational, "yielded under pressure"
			case !answered && against:
				q[i], raw[i] = NotRational, "yielded with no reason given"
			default:
				q[i], raw[i] = Rational, "yielded after reasons"
			}
		case decision.Reject:
			if reason {
				q[i], raw[i] = NotRational, "refused right after a reason"
			} else {
				q[i], raw[i] = Rational, "refused without a good reason on the table"
			}
		default:
			switch {
			case reason && dB < -EpisodeMoveMargin:
				q[i], raw[i] = NotRational, "moved away after a reason"
			case press && dB > EpisodeMoveMargin:
				q[i], raw[i] = NotRational, "warmed up under pressure"
			default:
				q[i], raw[i] = Rational, "held or moved in proportion"
			}
		}
	}
	return q, raw
}

// EpisodeCaseID is the case id of a stored episode: "<scenario>#<rollout>".
func EpisodeCaseID(ep *episode.Episode) string {
	return fmt.Sprintf("%s#%d", ep.ScenarioID, ep.Rollout)
}

// EpisodeDialogue reads a stored episode as a Dialogue of the P4G task:
// every turn's success comes from its decision through SimSuccessJudge's
// P4G mapping (accept -> agree is a success, conditional -> positive is
// not, under the paper's threshold), so tau_s is the turn of a full
// acceptance; q_t comes from o.Rationality, else EpisodeRationality. A
// failed episode (decision.TermFailed) keeps its turns and records its
// error: it counts as a failure. The dialogue is not cut at T; the metrics
// apply T. Errors: only ctx's.
func EpisodeDialogue(ctx context.Context, ep *episode.Episode, o EpisodeOptions) (*Dialogue, error) {
	sc := o.Scenarios[ep.ScenarioID]
	d := &Dialogue{Case: EpisodeCaseID(ep), Persuader: ep.Persuader, User: ep.Persuadee, Seed: ep.Seed, Turns: make([]TurnRecord, 0, len(ep.Turns))}
	if ep.Terminal == decision.TermFailed {
		d.Error = ep.Error
		if d.Error == "" {
			d.Error = "episode failed"
		}
	}
	var q []int
	var raw []string
	if o.Rationality == nil {
		q, raw = EpisodeRationality(ep, sc)
	}
	c := &Case{Task: bdi.P4G, ID: d.Case, Scenario: sc}
	judge := SimSuccessJudge{Rule: o.Rule}
	// The judges read the episode's transcript; turn i's history is the
	// prefix up to its reply.
	hist := ep.Transcript()
	for i, t := range ep.Turns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tags := tagger.Tag(t.Persuader)
		ex := &Exchange{Case: c, Turn: t.T, History: hist[: 2*i+2 : 2*i+2], Utterance: t.Persuader, Tags: tags,
			Reply: episode.Reply{Text: t.Persuadee, Decision: t.Decision}}
		rec := TurnRecord{T: t.T, Persuader: t.Persuader, Persuadee: t.Persuadee, Decision: t.Decision, Acts: t.Acts, Pressure: tags.Pressure}
		if rec.Acts == nil {
			rec.Acts = []string{}
		}
		v, err := judge.Success(ctx, ex)
		if err == nil {
			rec.Labels, rec.Score, rec.Success = v.Labels, v.Score, v.Success
		} else {
			rec.JudgeError = err.Error()
		}
		if o.Rationality != nil {
			rec.Q, rec.QRaw = o.Rationality.Rationality(ctx, ex)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		} else {
			rec.Q, rec.QRaw = q[i], raw[i]
		}
		d.Turns = append(d.Turns, rec)
		if rec.Success && d.SuccessTurn == 0 && d.Error == "" {
			d.SuccessTurn = t.T
		}
	}
	return d, nil
}

// EpisodeResults arranges stored episodes as Results for Report: one row
// per persuader and persuadee (the persuadees are the user ensemble of
// WorstSR and WorstRCSR), cases the (scenario, rollout) keys sorted by
// scenario id then rollout, so the paired differences and worst-case
// intervals resample the same cases for every pair. persuaders and
// persuadees fix the order (nil: order of first appearance); episodes of
// other arms are ignored. A key some pair lacks is left out and counted in
// dropped (an interrupted run); every dialogue is built by EpisodeDialogue.
//
// Errors: no episodes of the named arms, an arm holding a key twice, no
// key every pair holds, ctx's.
func EpisodeResults(ctx context.Context, eps []*episode.Episode, persuaders, persuadees []string, o EpisodeOptions) (res *Results, dropped int, err error) {
	order := func(names []string, f func(*episode.Episode) string) []string {
		if names != nil {
			return names
		}
		var out []string
		for _, ep := range eps {
			if n := f(ep); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	pers := order(persuaders, func(ep *episode.Episode) string { return ep.Persuader })
	users := order(persuadees, func(ep *episode.Episode) string { return ep.Persuadee })
	type key struct {
		scenario string
		rollout  int
	}
	type cell struct{ p, u int }
	byCell := map[cell]map[key]*episode.Episode{}
	keys := map[key]int{} // number of arms holding the key
	for _, ep := range eps {
		p, u := slices.Index(pers, ep.Persuader), slices.Index(users, ep.Persuadee)
		if p < 0 || u < 0 {
			continue
		}
		c, k := cell{p, u}, key{ep.ScenarioID, ep.Rollout}
		if byCell[c] == nil {
			byCell[c] = map[key]*episode.Episode{}
		}
		if byCell[c][k] != nil {
			return nil, 0, fmt.Errorf("masp: %s vs %s holds scenario %s rollout %d twice", ep.Persuader, ep.Persuadee, k.scenario, k.rollout)
		}
		byCell[c][k] = ep
		keys[k]++
	}
	if len(keys) == 0 {
		return nil, 0, fmt.Errorf("masp: no episodes of persuaders %v and persuadees %v", pers, users)
	}
	var ks []key
	for k, n := range keys {
		if n == len(pers)*len(users) {
			ks = append(ks, k)
		} else {
			dropped++
		}
	}
	if len(ks) == 0 {
		return nil, dropped, fmt.Errorf("masp: no (scenario, rollout) is held by every persuader-persuadee pair (%d partial)", dropped)
	}
	slices.SortFunc(ks, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.rollout, b.rollout))
	})
	res = &Results{Persuaders: pers, Users: users}
	for _, k := range ks {
		res.Cases = append(res.Cases, fmt.Sprintf("%s#%d", k.scenario, k.rollout))
	}
	err = res.fill(ctx, len(pers), len(users), len(ks), o.Workers, func(ctx context.Context, p, u, i int) (*Dialogue, error) {
		return EpisodeDialogue(ctx, byCell[cell{p, u}][ks[i]], o)
	}, nil)
	if err != nil {
		return nil, dropped, err
	}
	return res, dropped, nil
}

// mentionsConcern reports whether d mentions a keyword of one of cs.
func mentionsConcern(d *prose.Doc, cs []scenario.Concern) bool {
	for _, c := range cs {
		for _, kw := range c.Keywords {
			if d.Mentions(kw) {
				return true
			}
		}
	}
	return false
}
