package masp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// DefaultT is the turn budget of the closed-loop protocol (MASP paper, §4:
// eight system-user exchanges).
const DefaultT = 8

// Case is one evaluation episode's starting point: the task, the scenario
// the roles are started on (the persuader sees only its public part), and
// the task facts the judges need.
type Case struct {
	Task bdi.Task
	// ID identifies the case (the scenario id by default).
	ID       string
	Scenario *scenario.Scenario
	// Opening is the initial context h_0 placed before the first system
	// turn (PPDPP's CraigslistBargain greeting pair, ESConv's situation);
	// may be empty.
	Opening []episode.Message
	// Goal is the task goal g (a proposal verb phrase); "" means the
	// scenario's proposal.
	Goal string
	// Profile is the user profile p_u given to an LLM teacher ("" when
	// none).
	Profile string
	// Target is the task's target state z* before encoding; the zero
	// value means bdi.Target(Task).
	Target bdi.State
	// BuyerPrice and SellerPrice are CraigslistBargain's private targets
	// (buyer utility, Appendix C.7); SellerPrice is the listed price.
	BuyerPrice, SellerPrice float64
	// Item is the CraigslistBargain item; SellerBottom the lowest price
	// the seller takes (US$, 0 = none), given only to an LLM seller's own
	// prompt (the data set has none; package maspdata sets a Choice).
	Item         string
	SellerBottom float64
	// Emotion and Problem are ESConv's emotion_type and problem_type.
	Emotion, Problem string
}

// Framing returns the task framing an LLM user is started with
// (FramedPersuadee): ESConv's help-seeker with the emotion and problem,
// CraigslistBargain's seller with the item, the listed price and the
// bottom line; the persuasion frame for the other tasks.
func (c *Case) Framing() llmagent.Framing {
	switch c.Task {
	case bdi.ESConv:
		return llmagent.Framing{Frame: llmagent.FrameSupport, Emotion: c.Emotion, Problem: c.Problem}
	case bdi.CB:
		return llmagent.Framing{Frame: llmagent.FrameBargain, Item: c.Item, ListPrice: c.SellerPrice, BottomLine: c.SellerBottom}
	}
	return llmagent.Framing{}
}

// FramedPersuadee is a persuadee that can be started in a task framing
// (*llmagent.Persuadee). Play starts such a user with its case's Framing;
// other persuadees get Start.
type FramedPersuadee interface {
	episode.Persuadee
	StartFramed(ctx context.Context, sc *scenario.Scenario, f llmagent.Framing, seed uint64) (episode.PersuadeeSession, error)
}

var _ FramedPersuadee = (*llmagent.Persuadee)(nil)

func (c *Case) goal() string {
	if c.Goal != "" {
		return c.Goal
	}
	if c.Scenario != nil {
		return c.Scenario.Proposal
	}
	return ""
}

func (c *Case) target() (bdi.State, error) {
	if c.Target != (bdi.State{}) {
		return c.Target, nil
	}
	return bdi.Target(c.Task)
}

// Exchange is what judges see after one system-user exchange.
type Exchange struct {
	Case *Case
	// Turn is t, 1-based.
	Turn int
	// History is the whole accumulated dialogue through the user's reply
	// (h_{t+1}), opening included.
	History []episode.Message
	// Utterance is the system's turn a_t; Tags the tagger's reading of it.
	Utterance string
	Tags      tagger.Tags
	// Reply is the user's turn u_t with its decision.
	Reply episode.Reply
	// Before and After are the simulator's latent state before and after
	// the reply; nil for other persuadees.
	Before, After *sim.Latent
	// State is the teacher's state for h_{t+1}; nil when no teacher ran or
	// it failed.
	State *bdi.State
}

// Mind configures the BDI side of a rollout: teacher states, progress and
// rewards (MASP paper). A nil Mind skips all of it.
type Mind struct {
	// Teacher returns the teacher for one persuadee session; nil means
	// bdi.SimTeacher when the session is a sim.LatentReader (else no
	// states).
	Teacher func(episode.PersuadeeSession) bdi.Teacher
	// Encoder embeds state texts; nil means a shared embed.HashedTFIDF of
	// dimension embed.DefaultHashDim.
	Encoder embed.Encoder
	// Alpha are the scalar weights; zero means bdi.DefaultAlpha.
	Alpha bdi.Alpha
	// Student, when set, gives z-hat for the inference term of r_S.
	Student *bdi.Student
	// Weights; zero means DefaultWeights.
	Weights Weights
}

var defaultEncoder = embed.NewMemo(embed.NewHashedTFIDF(embed.DefaultHashDim))

// Config configures Play.
type Config struct {
	// T is the turn budget; <= 0 means DefaultT.
	T int
	// Success judges each exchange; required.
	Success SuccessJudge
	// Rationality judges each exchange; nil records q = 0 for every turn.
	Rationality RationalityJudge
	// Mind, when set, adds BDI states, progress and rewards per turn.
	Mind *Mind
}

// TurnRecord is one exchange of a played dialogue.
type TurnRecord struct {
	T         int               `json:"t"`
	Persuader string            `json:"persuader"`
	Persuadee string            `json:"persuadee"`
	Decision  decision.Decision `json:"decision"`
	Acts      []string          `json:"acts"`
	Pressure  int               `json:"pressure"`
	// Labels and Score are the success judge's reading; Success whether it
	// passed; JudgeError is set when the judge failed (not successful).
	Labels     []string `json:"labels"`
	Score      float64  `json:"score"`
	Success    bool     `json:"success"`
	JudgeError string   `json:"judge_error,omitempty"`
	// Price is the CraigslistBargain deal price when one was read.
	Price *float64 `json:"price,omitempty"`
	// Q is the rationality signal q_t; QRaw the judge's answer or rule.
	Q    int    `json:"q"`
	QRaw string `json:"q_raw"`
	// BDI side (nil without a Mind or when the teacher failed): the
	// teacher state for h_{t+1}, progress s_{t+1}, Delta s_t, the
	// mentalization error ||z-hat_t - z_t||_A^2 (with a student), and the
	// two rewards.
	State     *bdi.State `json:"state,omitempty"`
	Progress  *float64   `json:"progress,omitempty"`
	DeltaS    *float64   `json:"delta_s,omitempty"`
	MentalErr *float64   `json:"mental_err,omitempty"`
	RS        *float64   `json:"r_s,omitempty"`
	RU        *float64   `json:"r_u,omitempty"`
	// MindError is why this turn's BDI fields are missing: the teacher
	// or the state encoding failed ("" when they are set or no Mind ran).
	MindError string `json:"mind_error,omitempty"`
}

// Dialogue is one played closed-loop dialogue.
type Dialogue struct {
	Case      string `json:"case"`
	Persuader string `json:"persuader"`
	User      string `json:"user"`
	Seed      uint64 `json:"seed"`
	// SuccessTurn is tau_s, the first turn the success judge passed; 0 when
	// it never did within the budget.
	SuccessTurn int          `json:"success_turn"`
	Turns       []TurnRecord `json:"turns"`
	// Initial is the teacher's state for h_0; MindError says why it, or
	// its encoding z_0 (then every turn's progress is missing), failed.
	Initial   *bdi.State `json:"initial,omitempty"`
	MindError string     `json:"mind_error,omitempty"`
	// Error is set when a role failed; the dialogue then counts as a
	// failure from that turn on.
	Error string `json:"error,omitempty"`
}

// Trace returns the dialogue's success turn and q sequence for the metrics.
func (d *Dialogue) Trace() Trace {
	q := make([]int, len(d.Turns))
	for i, t := range d.Turns {
		q[i] = t.Q
	}
	return Trace{SuccessTurn: d.SuccessTurn, Q: q}
}

// Play runs the closed-loop protocol of the MASP paper's Appendix C.2 on c: from
// the opening context, at each turn the persuader speaks, the user
// replies, and the success judge reads the whole accumulated dialogue; the
// rationality judge scores the exchange. The dialogue stops at the first
// success, at a terminal decision of the user (a persuadee that has
// decided takes no more turns) or after T turns. Roles are started as in
// episode.Run: the persuader on the public scenario with seed
// episode.Mix(seed^1), the user on the full scenario with
// episode.Mix(seed^2) (a FramedPersuadee also with c.Framing()).
//
// Errors: a cancelled ctx returns ctx.Err(); a missing Success judge or
// scenario, or an invalid target, is an error. A role error ends the
// dialogue with Error set and a nil error (it counts as a failure).
func Play(ctx context.Context, cfg Config, c *Case, per episode.Persuader, user episode.Persuadee, seed uint64) (*Dialogue, error) {
	if cfg.Success == nil {
		return nil, errors.New("masp: Play needs a success judge")
	}
	if c.Scenario == nil {
		return nil, fmt.Errorf("masp: case %s has no scenario", c.ID)
	}
	T := cfg.T
	if T <= 0 {
		T = DefaultT
	}
	id := c.ID
	if id == "" {
		id = c.Scenario.ID
	}
	dl := &Dialogue{Case: id, Persuader: per.Name(), User: user.Name(), Seed: seed, Turns: []TurnRecord{}}
	fail := func(err error) (*Dialogue, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dl.Error = err.Error()
		return dl, nil
	}
	ps, err := per.Start(ctx, c.Scenario.Public(), episode.Mix(seed^1))
	if err != nil {
		return fail(fmt.Errorf("persuader start: %w", err))
	}
	opt := episode.EnvOptions{Persuader: per.Name(), Opening: c.Opening, NoProbes: true}
	if fu, ok := user.(FramedPersuadee); ok {
		opt.Start = func(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
			return fu.StartFramed(ctx, sc, c.Framing(), seed)
		}
	}
	env := episode.NewEnv(episode.Config{Tmax: T}, c.Scenario, user, seed, opt)
	if err := env.Reset(ctx); err != nil {
		return fail(userError(err))
	}
	es := env.Session()
	lr, _ := es.(sim.LatentReader)
	mind, err := newMindRun(ctx, cfg.Mind, c, es)
	if err != nil {
		return nil, err
	}
	if mind != nil {
		var err error
		dl.Initial, err = mind.label(ctx, env.Transcript())
		if err == nil {
			err = mind.start(ctx, dl.Initial)
		}
		if err != nil {
			dl.MindError = err.Error()
		}
	}
	for t := 1; !env.Done(); t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var zHat []float64
		if mind != nil && mind.m.Student != nil {
			zHat = mind.m.Student.Predict(env.Transcript())
		}
		u, err := ps.Say(ctx, env.Transcript())
		if err != nil {
			return fail(fmt.Errorf("turn %d persuader: %w", t, err))
		}
		var before, after *sim.Latent
		if lr != nil {
			l := lr.Latent()
			before = &l
		}
		res, err := env.Step(ctx, u)
		if err != nil {
			return fail(userError(err))
		}
		if lr != nil {
			l := lr.Latent()
			after = &l
		}
		transcript := env.Transcript()
		tags := res.Tags
		r := episode.Reply{Text: res.Turn.Persuadee, Decision: res.Turn.Decision, Usage: res.Turn.PersuadeeUsage}
		rec := TurnRecord{T: t, Persuader: u.Text, Persuadee: r.Text, Decision: r.Decision, Acts: tags.Acts.Strings(), Pressure: tags.Pressure}
		ex := &Exchange{Case: c, Turn: t, History: transcript, Utterance: u.Text, Tags: tags, Reply: r, Before: before, After: after}
		if mind != nil {
			var err error
			ex.State, err = mind.label(ctx, transcript)
			if err == nil {
				err = mind.step(ctx, &rec, ex.State, zHat)
			}
			if err != nil {
				rec.MindError = err.Error()
			}
		}
		v, err := cfg.Success.Success(ctx, ex)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rec.JudgeError = err.Error()
		} else {
			rec.Labels, rec.Score, rec.Success = v.Labels, v.Score, v.Success
			if v.HasPrice {
				p := v.Price
				rec.Price = &p
			}
		}
		if cfg.Rationality != nil {
			rec.Q, rec.QRaw = cfg.Rationality.Rationality(ctx, ex)
		} else {
			rec.QRaw = "no judge"
		}
		if mind != nil {
			finishUserReward(&rec, mind.m.Weights)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dl.Turns = append(dl.Turns, rec)
		if rec.Success {
			dl.SuccessTurn = t
			break
		}
	}
	return dl, nil
}

// userError names the user in a persuadee's role error as the protocol's
// records do ("user start: ...", "turn 3 user: ...").
func userError(err error) error {
	var re *episode.RoleError
	if !errors.As(err, &re) || re.Role != episode.RolePersuadee {
		return err
	}
	if re.T == 0 {
		return fmt.Errorf("user start: %w", re.Err)
	}
	return fmt.Errorf("turn %d user: %w", re.T, re.Err)
}

// mindRun is the BDI bookkeeping of one dialogue.
type mindRun struct {
	m       Mind
	c       *Case
	teacher bdi.Teacher
	enc     embed.Encoder
	d       int
	zStar   []float64
	z0, zt  []float64 // initial and current teacher vectors
	st      float64   // s_t of zt
}

func newMindRun(ctx context.Context, m *Mind, c *Case, es episode.PersuadeeSession) (*mindRun, error) {
	if m == nil {
		return nil, nil
	}
	r := &mindRun{m: *m, c: c, enc: m.Encoder}
	if r.enc == nil {
		r.enc = defaultEncoder
	}
	if r.m.Alpha == (bdi.Alpha{}) {
		r.m.Alpha = bdi.DefaultAlpha
	}
	if r.m.Weights == (Weights{}) {
		r.m.Weights = DefaultWeights
	}
	switch {
	case m.Teacher != nil:
		r.teacher = m.Teacher(es)
	default:
		if lr, ok := es.(sim.LatentReader); ok {
			r.teacher = SimTeacher{Reader: lr}
		}
	}
	tgt, err := c.target()
	if err != nil {
		return nil, err
	}
	if r.zStar, err = bdi.Vector(ctx, tgt, r.enc, r.m.Alpha); err != nil {
		return nil, fmt.Errorf("masp: target of case %s: %w", c.ID, err)
	}
	r.d, _ = bdi.TextDim(r.zStar)
	return r, nil
}

// label asks the teacher for the state of history; nil and no error when
// there is no teacher, nil and the teacher's error when it failed (the
// turn's BDI fields then stay missing).
func (r *mindRun) label(ctx context.Context, history []episode.Message) (*bdi.State, error) {
	if r.teacher == nil {
		return nil, nil
	}
	s, err := r.teacher.Label(ctx, r.c.Task, r.c.Profile, r.c.goal(), history)
	if err != nil {
		return nil, fmt.Errorf("teacher: %w", err)
	}
	return &s, nil
}

// vec encodes s as a state vector of the target's dimension; nil for a
// nil s.
func (r *mindRun) vec(ctx context.Context, s *bdi.State) ([]float64, error) {
	if s == nil {
		return nil, nil
	}
	z, err := bdi.Vector(ctx, *s, r.enc, r.m.Alpha)
	if err != nil {
		return nil, fmt.Errorf("state vector: %w", err)
	}
	if len(z) != len(r.zStar) {
		return nil, fmt.Errorf("state vector of dimension %d, target's %d", len(z), len(r.zStar))
	}
	return z, nil
}

// start sets z_0 from the teacher's state for h_0; on an error z_0 stays
// missing and so does every turn's progress.
func (r *mindRun) start(ctx context.Context, s0 *bdi.State) error {
	z, err := r.vec(ctx, s0)
	r.z0, r.zt, r.st = z, z, 0
	return err
}

// step fills rec's BDI fields from the new teacher state (z_{t+1}) and
// the student estimate zHat made before the turn (z-hat_t, compared with
// z_t). An encoding error leaves them missing and is returned.
func (r *mindRun) step(ctx context.Context, rec *TurnRecord, s *bdi.State, zHat []float64) error {
	rec.State = s
	z, err := r.vec(ctx, s)
	if z == nil || r.z0 == nil {
		return err
	}
	next := bdi.Progress(z, r.z0, r.zStar, r.d)
	ds := next - r.st
	rec.Progress, rec.DeltaS = &next, &ds
	var zh []float64
	if zHat != nil && len(zHat) == len(r.zt) && r.zt != nil {
		zh = zHat
		e := bdi.DistA(zHat, r.zt, r.d)
		rec.MentalErr = &e
	}
	rs := SystemReward(ds, zh, r.zt, r.d, r.m.Weights)
	ru := UserReward(ds, 0, r.m.Weights) // q is added by Play once judged
	rec.RS, rec.RU = &rs, &ru
	r.zt, r.st = z, next
	return nil
}

// finishUserReward adds w_rat q to the user reward of rec.
func finishUserReward(rec *TurnRecord, w Weights) {
	if rec.RU != nil {
		v := *rec.RU + w.Rat*float64(rec.Q)
		rec.RU = &v
	}
}

// ScenarioCases turns persuasion scenarios into P4G-task cases for Play:
// the case id is the scenario id, the profile is the hidden persona and
// motivation (given only to an LLM teacher), and the target is P4G's
// template for charity scenarios and bdi.ProposalTarget of the proposal
// for the others (MASP paper; Choice for non-charity scenarios). The
// scenarios are not copied: do not change them while cases are in use.
func ScenarioCases(ss []scenario.Scenario) []*Case {
	out := make([]*Case, len(ss))
	for i := range ss {
		sc := &ss[i]
		c := &Case{Task: bdi.P4G, ID: sc.ID, Scenario: sc, Profile: strings.TrimSpace(sc.Hidden.Persona + " " + sc.Hidden.Motivation)}
		if sc.Family != scenario.Charity {
			c.Target = bdi.ProposalTarget(sc.Proposal)
		}
		out[i] = c
	}
	return out
}

// CacheRecords turns played dialogues into BDI cache records (MASP paper,
// §3.2): one session record per dialogue with a teacher state for h_0
// (Dialogue.Initial; the profile from its case), and one turn record per turn
// with a teacher state, holding the history prefix h_{t+1} (the case's
// opening and the turns so far). Dialogues without an initial state are
// skipped; session ids are "<case>/<persuader>/<user>". cases maps case ids
// to their cases.
func CacheRecords(cases map[string]*Case, ds []*Dialogue) *bdi.Cache {
	c := &bdi.Cache{}
	for _, d := range ds {
		cs := cases[d.Case]
		if d.Initial == nil || cs == nil {
			continue
		}
		id := d.Case + "/" + d.Persuader + "/" + d.User
		c.Sessions = append(c.Sessions, bdi.SessionRecord{Task: cs.Task, Session: id, Profile: cs.Profile, Initial: *d.Initial})
		h := append([]episode.Message(nil), cs.Opening...)
		for _, t := range d.Turns {
			h = episode.AppendTurn(h, t.Persuader, t.Persuadee)
			if t.State == nil {
				continue
			}
			c.Turns = append(c.Turns, bdi.TurnRecord{Task: cs.Task, Session: id, Turn: t.T, History: append([]episode.Message(nil), h...), State: *t.State})
		}
	}
	return c
}
