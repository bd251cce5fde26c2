// Package episode runs one persuasion dialogue between a Persuader and a
// Persuadee over a Scenario, reading the persuadee's probed belief after
// every reply (Probe-RPO paper, §2-3). It defines the small interfaces
// every role implements: the embedded simulator, built-in persuaders and
// LLM-backed roles alike.
//
// # The turn engine
//
// Env is the one place the turn cycle lives; every driver of a dialogue
// steps it. NewEnv(cfg, sc, pee, seed, opt) and Reset start the persuadee
// (seed Mix(seed^2)) and the t = 0 probe read-out; Step(ctx, utterance)
// tags the utterance, gets the reply, checks its decision and starts the
// turn's read-out; Settle waits for that read-out and completes the turn
// (Probes, Belief, Dense). A terminal decision or Tmax ends the episode;
// a role error ends it as truncated (ErrTruncated) or failed, and is
// returned as a *RoleError; the judges run once a scored episode ends.
// Episode, Transcript and Done read the state.
//
//	env := episode.NewEnv(cfg, sc, pee, seed, episode.EnvOptions{})
//	if err := env.Reset(ctx); err != nil { ... }
//	for !env.Done() {
//		res, err := env.Step(ctx, next(env.Transcript()))
//		...
//		res, err = env.Settle(ctx) // res.Turn.Belief, res.Turn.Dense
//	}
//	ep := env.Episode()
//
// The drivers: Run (persuarena eval) asks the persuader for its next
// utterance while the read-out is in flight and settles it in the next
// Step; the OpenEnv server (package server) settles each step before it
// answers; the MASP paper's closed-loop protocol (package masp) sets
// EnvOptions.Opening and NoProbes and runs its judges around each Step;
// fidelity replay (package fidelity) feeds real utterances with
// EnvOptions.PastTerminal.
package episode

import (
	"context"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Speaker names who said a Message.
type Speaker string

// The two speakers.
const (
	PersuaderSpeaker Speaker = "persuader"
	PersuadeeSpeaker Speaker = "persuadee"
)

// Message is one visible utterance of the transcript: who said it and
// what, nothing else (a persuadee perceives the raw text through its own
// reader). Persuadee messages hold only what the persuader may see (no
// decision line, no reasoning).
type Message struct {
	Speaker Speaker `json:"speaker"`
	Text    string  `json:"text"`
}

// Usage counts a role's engine tokens and requests (llm.Usage, the one
// definition): all zero for the simulator and built-in persuaders.
type Usage = llm.Usage

// Utterance is a persuader's turn.
type Utterance struct {
	Text string
	// Acts optionally lists the persuasion acts the persuader intended
	// (planners report them); the engine also tags the text independently.
	Acts  []string
	Usage Usage
}

// Reply is a persuadee's turn.
type Reply struct {
	// Text is what the persuader sees.
	Text     string
	Decision decision.Decision
	Usage    Usage
	// Cut reports a reply the engine cut off at its length limit even
	// after a repair: Text holds its complete sentences only and Decision
	// is continue (Turn.ReplyCut records it).
	Cut bool
}

// Persuader is a persuasion policy. Start begins one episode; it receives
// only the public scenario view, never the hidden profile. Start may be
// called concurrently from several goroutines; each session is used by one
// goroutine at a time.
type Persuader interface {
	// Name identifies the persuader in runs and tables, e.g. "script".
	Name() string
	// Start begins an episode. seed drives all of the session's randomness.
	Start(ctx context.Context, pub scenario.Public, seed uint64) (PersuaderSession, error)
}

// PersuaderSession produces the persuader's turns of one episode.
type PersuaderSession interface {
	// Say returns the next utterance given the visible transcript so far
	// (empty before the first turn).
	Say(ctx context.Context, transcript []Message) (Utterance, error)
}

// Persuadee is a persuasion target with a hidden profile. Start may be
// called concurrently; each session is used by one goroutine at a time.
type Persuadee interface {
	// Name identifies the persuadee, e.g. "sim".
	Name() string
	// Start begins an episode on sc (including its hidden profile).
	Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (PersuadeeSession, error)
}

// PersuadeeSession produces the persuadee's replies of one episode.
type PersuadeeSession interface {
	// Reply answers the transcript, whose last message is the persuader's
	// latest utterance.
	Reply(ctx context.Context, transcript []Message) (Reply, error)
}

// Prober reads the probe basis from a persuadee's current state in a
// discarded fork of its context (Probe-RPO paper): the fork never enters the
// conversation. A PersuadeeSession that can be probed implements Prober;
// transcript is the conversation so far (empty at t = 0). It returns one
// Answer per probe, in basis order.
type Prober interface {
	Probe(ctx context.Context, transcript []Message, basis probe.Basis) ([]probe.Answer, error)
}

// ProbabilityProber is implemented by a Prober that knows each probe's
// P(Yes) directly (the simulator). Run then reads the basis through
// ProbeProbabilities and probe.ReadProbability instead of Probe and
// probe.Read: the same Readings as pooling probe.FromProbability(p), bit
// for bit, without building or parsing token log-probs.
// ProbeProbabilities appends one P(Yes) in [0, 1] per probe of basis, in
// basis order, to dst and returns it; like Probe it reads the state only
// and never changes it. It never fails.
type ProbabilityProber interface {
	ProbeProbabilities(dst []float64, basis probe.Basis) []float64
}

// UtteranceTagger is implemented by a PersuadeeSession whose reader has
// read, or will read, the persuader's utterances with package prose and
// can give the tagger's reading from the same reading (the simulator's
// embedded reader keeps it). The engine calls TagUtterance(text) in place
// of tagger.Tag(text) for each persuader utterance, just before Reply,
// for Turn.Acts (analysis and planner features); it must return exactly
// tagger.Tag(text). The persuadee never receives the engine's tags.
type UtteranceTagger interface {
	TagUtterance(text string) tagger.Tags
}

// ProbeUsageReporter is implemented by a Prober that counts the engine
// usage of its read-outs (the LLM persuadees). TakeProbeUsage returns the
// usage since its last call and resets it; Run records it per turn, and
// for t = 0 in Episode.InitialProbeUsage.
type ProbeUsageReporter interface {
	TakeProbeUsage() Usage
}

// Judge rates a finished episode's persuasion strategy (Probe-RPO paper). It
// sees only the public scenario and the visible transcript. Strategy returns
// R_strategy in [-1, 1] and the engine usage of this call (also when it
// fails: the cost was paid). Safe for concurrent use.
type Judge interface {
	Strategy(ctx context.Context, pub scenario.Public, transcript []Message) (float64, Usage, error)
}

// ActJudge tags one persuader utterance with the five persuasion acts of
// the Probe-RPO paper's Figure 5 (multi-label; names as tagger.Act.String, in
// tagger.Acts order) and returns the engine usage of this call. Safe for
// concurrent use.
type ActJudge interface {
	Acts(ctx context.Context, utterance string) ([]string, Usage, error)
}

// RewardComponent is one named entry of a reward vector, e.g. "r_model",
// "e_judge", "judge.emotional_value" or "func.no_overpromise" (the REPO
// paper's heterogeneous reward, package reporeward). Value's unit and range are
// those of the component (documented by whoever wrote it).
type RewardComponent struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// TurnReward is the reward vector of persuader turn T: its composed
// reward R and its named components.
type TurnReward struct {
	T          int               `json:"t"`
	R          float64           `json:"r"`
	Components []RewardComponent `json:"components"`
}

// RewardVector is an episode's reward from a reward spec (Config.Rewarder;
// the REPO paper): the composed reward R, its named components for the
// episode and per persuader turn. Every value is finite.
type RewardVector struct {
	// Spec names the reward spec that wrote it.
	Spec       string            `json:"spec"`
	R          float64           `json:"r"`
	Components []RewardComponent `json:"components"`
	Turns      []TurnReward      `json:"turns,omitempty"`
}

// Get returns the value of the episode component name; ok is false when
// there is none.
func (v *RewardVector) Get(name string) (float64, bool) {
	for _, c := range v.Components {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// Rewarder scores a finished, scored episode with a reward spec (the REPO
// paper's heterogeneous reward; package reporeward): it sees the public
// scenario, the episode so far (turns, terminal, R_goal, R_strategy) and
// the visible transcript, and returns the reward vector and the engine
// usage of its judge calls (also when it fails). Safe for concurrent use.
type Rewarder interface {
	Reward(ctx context.Context, pub scenario.Public, ep *Episode, transcript []Message) (*RewardVector, Usage, error)
}

// Turn records one persuader turn and the persuadee's reply (Probe-RPO paper).
type Turn struct {
	// T is the persuader turn index, 1..Tmax.
	T         int               `json:"t"`
	Persuader string            `json:"persuader"`
	Persuadee string            `json:"persuadee"`
	Decision  decision.Decision `json:"decision"`
	// ReplyCut reports that the persuadee's reply was cut off at the
	// engine's length limit even after a repair (Reply.Cut): Persuadee
	// holds its complete sentences and Decision is continue.
	ReplyCut bool `json:"reply_cut,omitempty"`
	// Acts are the tagged persuasion acts of the persuader utterance.
	Acts []string `json:"acts"`
	// Probes are read after the persuadee's reply.
	Probes []probe.Reading `json:"probes,omitempty"`
	// Belief is B_t in [0, 1]; nil when every probe was unreadable.
	Belief *float64 `json:"belief"`
	// Dense is r_t = B_t - B_{t-1} over the probes readable at both t-1
	// and t (probe.Common); nil when there are none.
	Dense *float64 `json:"dense"`
	// DenseProbes is the number of probes Dense was computed over when that
	// is fewer than the probes of the basis (some were unreadable at t-1 or
	// t); 0 when it used every probe, or Dense is nil.
	DenseProbes int `json:"dense_probes,omitempty"`
	// Latencies in milliseconds (ProbeMS is 0 for a ProbabilityProber,
	// read in well under a microsecond).
	PersuaderMS float64 `json:"persuader_ms"`
	PersuadeeMS float64 `json:"persuadee_ms"`
	ProbeMS     float64 `json:"probe_ms"`
	// Token usage per role.
	PersuaderUsage Usage `json:"persuader_usage"`
	PersuadeeUsage Usage `json:"persuadee_usage"`
	ProbeUsage     Usage `json:"probe_usage"`
}

// Episode is one finished (or failed) rollout.
type Episode struct {
	RunID      string `json:"run_id"`
	ScenarioID string `json:"scenario_id"`
	// Rollout is the rollout index within the scenario, 0-based.
	Rollout int `json:"rollout"`
	// Seed is the episode seed, Seed(runSeed, ScenarioID, Rollout).
	Seed      uint64 `json:"seed"`
	Persuader string `json:"persuader"`
	Persuadee string `json:"persuadee"`
	// Scenario facts kept for analysis (never shown to a persuader).
	Split      scenario.Split      `json:"split"`
	Family     scenario.Family     `json:"family"`
	Domain     string              `json:"domain"`
	Resistance scenario.Resistance `json:"resistance"`
	// Initial are the probe readings at t = 0, before the first turn.
	Initial []probe.Reading `json:"initial,omitempty"`
	// B0 is the initial belief; nil when unreadable.
	B0       *float64          `json:"b0"`
	Turns    []Turn            `json:"turns"`
	Terminal decision.Terminal `json:"terminal"`
	// RGoal is R_goal of Terminal (Probe-RPO paper); NaN-free: 0 for failed
	// episodes.
	RGoal float64 `json:"r_goal"`
	// Error holds the failure message of a TermFailed episode.
	Error string `json:"error,omitempty"`
	// Transient reports that the failure wrapped ErrTransient (an engine
	// fault that may not recur); it is not stored in the run database.
	Transient bool `json:"-"`
	// RetryAfter is how long a transient fault is known to last (an open
	// circuit breaker's remaining cooldown), 0 when unknown; a runner
	// waits at least this long before replaying. Not stored.
	RetryAfter time.Duration `json:"-"`

	// InitialProbeUsage and InitialProbeMS are the engine usage and latency
	// (milliseconds) of the t = 0 probe read-out (the Probe-RPO paper's Table
	// 4 counts a read-out per persuadee turn; this is the one before the
	// first turn). Zero for probers that report no usage (the simulator).
	InitialProbeUsage Usage   `json:"initial_probe_usage,omitzero"`
	InitialProbeMS    float64 `json:"initial_probe_ms,omitempty"`

	// RStrategy is the judge's rating of the persuader's conduct,
	// R_strategy in [-1, 1] (Probe-RPO paper: 1 honest and respectful, -1
	// deceptive or pressuring); nil when no judge ran or the judge failed.
	RStrategy *float64 `json:"r_strategy,omitempty"`
	// ActsBy names who tagged Turn.Acts: "" for the rule tagger (package
	// tagger), ActsByJudge for the judge's multi-label tagging
	// (Config.ActJudge).
	ActsBy string `json:"acts_by,omitempty"`
	// JudgeUsage and JudgeMS are the engine usage and wall-clock
	// milliseconds of the judge's calls for this episode (strategy rating
	// and act tagging), unreadable answers included (a request the engine
	// refused reports no usage).
	JudgeUsage Usage   `json:"judge_usage,omitzero"`
	JudgeMS    float64 `json:"judge_ms,omitempty"`
	// JudgeError holds the judge's failure message; a judge failure never
	// fails the episode (RStrategy stays nil, or the rule tagger's acts
	// stay).
	JudgeError string `json:"judge_error,omitempty"`
	// Reward is the reward vector of Config.Rewarder (the REPO paper);
	// nil when none is configured or it failed (its error then goes to
	// JudgeError, its usage to JudgeUsage).
	Reward *RewardVector `json:"reward,omitempty"`
}

// ActsByJudge is Episode.ActsBy when the judge tagged the acts.
const ActsByJudge = "judge"

// Transcript rebuilds the visible dialogue of e from its turns: for each
// turn the persuader's utterance, then the persuadee's reply as stored
// (decision stripped), so 2·len(e.Turns) messages without tags; nil when
// e has no turns. The LLM judges and roles that read a finished episode
// (BDI-Bayes, PersuHMM, REPO's ratings) see it so.
func (e *Episode) Transcript() []Message {
	if len(e.Turns) == 0 {
		return nil
	}
	out := make([]Message, 0, 2*len(e.Turns))
	for _, t := range e.Turns {
		out = AppendTurn(out, t.Persuader, t.Persuadee)
	}
	return out
}

// AppendTurn appends one turn's visible pair to h and returns the
// extended slice: the persuader's utterance, then the persuadee's reply
// text, untagged. Transcript is these pairs in turn order; a record of
// turns that is not an Episode (MASP's dialogues) renders through it too,
// so every reader of a finished dialogue sees the same messages.
func AppendTurn(h []Message, persuader, persuadee string) []Message {
	return append(h, Message{Speaker: PersuaderSpeaker, Text: persuader}, Message{Speaker: PersuadeeSpeaker, Text: persuadee})
}

// OutcomeReward returns the episode's outcome reward R_out = R_goal +
// w·R_strategy (Probe-RPO paper, reward.Outcome); R_goal when RStrategy is nil (no
// judge, or the judge failed). w is normally reward.DefaultStrategyWeight.
// For a failed episode it returns RGoal (0): callers exclude failed
// episodes.
func (e *Episode) OutcomeReward(w float64) float64 {
	o := Outcome{RGoal: e.RGoal, RStrategy: e.RStrategy}
	return o.OutcomeReward(w)
}

// Outcome is the part of an episode that outcome tables read (Table 5/9
// columns): no turns, so a run's outcomes stream from storage in constant
// memory. BFinal is FinalBelief (nil when none); Turns is len(Turns).
type Outcome struct {
	Persuader, Persuadee, ScenarioID string
	Rollout                          int
	Terminal                         decision.Terminal
	RGoal                            float64
	RStrategy                        *float64
	JudgeError                       string
	Turns                            int
	BFinal                           *float64
}

// Outcome returns the episode's Outcome.
func (e *Episode) Outcome() Outcome {
	o := Outcome{Persuader: e.Persuader, Persuadee: e.Persuadee, ScenarioID: e.ScenarioID, Rollout: e.Rollout,
		Terminal: e.Terminal, RGoal: e.RGoal, RStrategy: e.RStrategy, JudgeError: e.JudgeError, Turns: len(e.Turns)}
	if b, ok := e.FinalBelief(); ok {
		o.BFinal = &b
	}
	return o
}

// OutcomeReward is Episode.OutcomeReward for an Outcome.
func (o *Outcome) OutcomeReward(w float64) float64 {
	if o.RStrategy == nil {
		return o.RGoal
	}
	return reward.Outcome(o.RGoal, *o.RStrategy, w)
}

// FinalBelief returns B_T, the belief read after the episode's last
// recorded turn (Probe-RPO paper, Table 9); ok is false when that read-out
// was unreadable, or the episode has no turn. A missing B_T stays missing:
// it is never an earlier turn's belief nor B0, which would count an
// episode whose probes failed as moved or not by its start.
func (e *Episode) FinalBelief() (float64, bool) {
	if n := len(e.Turns); n > 0 && e.Turns[n-1].Belief != nil {
		return *e.Turns[n-1].Belief, true
	}
	return 0, false
}

// RiseFallStep is the change in belief, 0.02 on [0, 1], that counts as a
// rise or a fall between two consecutive beliefs for RisesAndFalls.
//
// Choice: 0.02, well above a slider's resolution in PersuasionTrace's
// reports (about 0.0025) and the simulator's rounding, and small enough
// that one argument's effect counts.
const RiseFallStep = 0.02

// RisesAndFalls reports whether the beliefs bs (in order) both rise and
// fall by more than eps from one value to the next: whether per-turn
// changes, and so dense rewards, take both signs. Fewer than two values
// neither rise nor fall.
func RisesAndFalls(bs []float64, eps float64) bool {
	up, down := false, false
	for k := 1; k < len(bs); k++ {
		up = up || bs[k]-bs[k-1] > eps
		down = down || bs[k-1]-bs[k] > eps
	}
	return up && down
}

// Beliefs returns the episode's readable beliefs in order: B0, then each
// turn's (turns without a readable belief skipped); nil when B0 is
// unreadable.
func (e *Episode) Beliefs() []float64 {
	if e.B0 == nil {
		return nil
	}
	bs := []float64{*e.B0}
	for _, t := range e.Turns {
		if t.Belief != nil {
			bs = append(bs, *t.Belief)
		}
	}
	return bs
}
