package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
)

// RewardMode selects the per-step reward an Env returns.
type RewardMode string

// The reward modes.
const (
	// Dense returns r_t = B_t - B_{t-1} at every step (Probe-RPO paper,
	// §3.2), in [-1, 1]. When either belief is missing (every probe
	// unreadable) the reward is 0 and Metadata.RewardMissing is set: a
	// missing reward is reported, never silently scored as 0.
	Dense RewardMode = "dense"
	// Outcome returns 0 before the last step and R_out = R_goal +
	// w·R_strategy at it (Probe-RPO paper; R_strategy is 0 unless a Judge is
	// configured).
	Outcome RewardMode = "outcome"
	// Both returns the dense reward at every step plus R_out at the last.
	//
	// Choice: the two terms are simply added (weight 1 each); trainers that
	// weight them (Probe-RPO's λ, Probe-RPO paper) read Metadata.Dense and
	// Metadata.ROut separately.
	Both RewardMode = "both"
)

// RewardModes lists the reward modes in canonical order.
var RewardModes = []RewardMode{Dense, Outcome, Both}

func (m RewardMode) valid() bool { return slices.Contains(RewardModes, m) }

// Decisions reported in Observation.Decision: the persuadee's per-reply
// decisions (decision.Decision), plus "pending" when the reply at Tmax
// carried no decision and "truncated" when the conversation outgrew the
// persuadee's context window (docs/engines.md).
const (
	DecisionPending   = "pending"
	DecisionTruncated = "truncated"
)

// Set is a named scenario set a client may choose at reset.
type Set struct {
	// Name is what clients pass as reset's "set", e.g. "arena".
	Name      string
	Scenarios []scenario.Scenario
}

// Defaults of EnvConfig.
const (
	// DefaultMaxMessageBytes bounds one persuader message (bytes of UTF-8).
	DefaultMaxMessageBytes = 16 << 10
	// DefaultPersuaderName is the persuader name stored with server-side
	// episodes: the trainer on the other end of the connection.
	DefaultPersuaderName = "external"
)

// EnvConfig configures the environments of a Factory. Zero fields take the
// defaults given.
type EnvConfig struct {
	// Persuadee plays every episode (required), e.g. sim.New(sim.DefaultConfig()).
	Persuadee episode.Persuadee
	// Sets are the scenario sets clients may choose from (at least one);
	// the first is the default.
	Sets []Set
	// Split is the default split resets draw from; "" means all splits.
	Split scenario.Split
	// Tmax is the maximum number of persuader turns; 0 means
	// episode.DefaultTmax (10, Probe-RPO paper).
	Tmax int
	// Basis is the probe basis; nil means probe.Default (Probe-RPO paper).
	Basis probe.Basis
	// Goal maps terminal states to R_goal; nil means reward.DefaultGoal.
	Goal *reward.GoalRewards
	// Reward is the default reward mode; "" means Dense.
	Reward RewardMode
	// StrategyWeight is w in R_out = R_goal + w·R_strategy; nil means
	// reward.DefaultStrategyWeight.
	StrategyWeight *float64
	// Judge rates the persuader's strategy, R_strategy in [-1, 1], at the
	// end of each episode that did not fail (as in episode.Run: it sees
	// the public scenario and the visible transcript); nil means
	// R_strategy = 0. A failed or out-of-range rating leaves R_strategy =
	// 0 and is reported in Metadata.StrategyError.
	Judge episode.Judge
	// Rewarder, when set, scores each finished episode that did not fail
	// with a reward spec (REPO paper; package reporeward): its reward vector is
	// sent in the last step's Metadata.RewardVector and stored with the
	// episode, and its composed R replaces R_out as the outcome reward.
	Rewarder episode.Rewarder
	// MaxMessageBytes bounds the length of an action's message; 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// PersuaderName is stored as the episodes' persuader; "" means
	// DefaultPersuaderName.
	PersuaderName string
	// Seed is the base of the seeds given to resets that carry none.
	Seed uint64
	// Sink, when set, receives every finished episode (including failed
	// and truncated ones; not abandoned ones), e.g. to store it in the run
	// database. Its Rollout is the factory's episode sequence number
	// (0-based), so keys stay unique when a scenario is played many times.
	// Sink is called from the session's goroutine; it must be safe for
	// concurrent use.
	Sink func(*episode.Episode) error
}

// Factory creates environments that share one configuration: the shared,
// read-only part of every session. It is safe for concurrent use.
type Factory struct {
	cfg   EnvConfig
	w     float64
	pools map[string]map[scenario.Split][]*scenario.Scenario
	auto  atomic.Uint64 // seedless resets so far
	seq   atomic.Uint64 // finished episodes so far
}

// NewFactory validates cfg, fills in defaults and indexes the scenario
// sets by split. It returns an error for a missing persuadee, no sets, an
// empty or duplicate set name, an unknown split or reward mode, a negative
// Tmax or MaxMessageBytes, or a default (set, split) without scenarios.
func NewFactory(cfg EnvConfig) (*Factory, error) {
	if cfg.Persuadee == nil {
		return nil, errors.New("server: no persuadee configured")
	}
	if len(cfg.Sets) == 0 {
		return nil, errors.New("server: no scenario set configured")
	}
	var err error
	if cfg.Split, err = scenario.ParseSplit(string(cfg.Split)); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.Tmax < 0 || cfg.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("server: negative tmax %d or max message bytes %d", cfg.Tmax, cfg.MaxMessageBytes)
	}
	if cfg.Tmax == 0 {
		cfg.Tmax = episode.DefaultTmax
	}
	if cfg.Basis == nil {
		cfg.Basis = probe.Default
	}
	if cfg.Goal == nil {
		g := reward.DefaultGoal
		cfg.Goal = &g
	}
	if cfg.Reward == "" {
		cfg.Reward = Dense
	}
	if !cfg.Reward.valid() {
		return nil, fmt.Errorf("server: unknown reward mode %q (want dense, outcome or both)", cfg.Reward)
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.PersuaderName == "" {
		cfg.PersuaderName = DefaultPersuaderName
	}
	f := &Factory{cfg: cfg, w: reward.DefaultStrategyWeight, pools: map[string]map[scenario.Split][]*scenario.Scenario{}}
	if cfg.StrategyWeight != nil {
		f.w = *cfg.StrategyWeight
	}
	for i := range cfg.Sets {
		s := &cfg.Sets[i]
		if s.Name == "" {
			return nil, fmt.Errorf("server: scenario set %d has no name", i)
		}
		if _, dup := f.pools[s.Name]; dup {
			return nil, fmt.Errorf("server: scenario set %q given twice", s.Name)
		}
		pool := map[scenario.Split][]*scenario.Scenario{}
		for j := range s.Scenarios {
			sc := &s.Scenarios[j]
			pool[""] = append(pool[""], sc)
			pool[sc.Split] = append(pool[sc.Split], sc)
		}
		f.pools[s.Name] = pool
	}
	if len(f.pools[cfg.Sets[0].Name][cfg.Split]) == 0 {
		return nil, fmt.Errorf("server: scenario set %q has no %s scenarios", cfg.Sets[0].Name, splitName(cfg.Split))
	}
	return f, nil
}

// Config returns the factory's configuration with defaults filled in.
func (f *Factory) Config() EnvConfig { return f.cfg }

// Count returns the number of scenarios of set in split ("" for all).
func (f *Factory) Count(set string, split scenario.Split) int { return len(f.pools[set][split]) }

// NewEnv returns a fresh environment; call Reset before Step.
func (f *Factory) NewEnv() *Env { return &Env{f: f} }

func splitName(s scenario.Split) string {
	if s == "" {
		return "all"
	}
	return string(s)
}

// ResetOptions are the parameters of a reset (the "data" of a WebSocket
// reset message, or the POST /reset body). All are optional.
type ResetOptions struct {
	// ScenarioID plays this scenario; it must belong to the chosen set and
	// split. Without it the scenario is drawn from the seed.
	ScenarioID string `json:"scenario_id,omitempty"`
	// Set names one of the configured scenario sets; "" means the first.
	Set string `json:"set,omitempty"`
	// Split is train, val, heldout or all; "" means the configured split.
	Split string `json:"split,omitempty"`
	// Seed is the run seed the episode's randomness derives from, as in
	// persuarena eval; nil draws one from the server's seed sequence.
	Seed *uint64 `json:"seed,omitempty"`
	// Rollout is the rollout index (>= 0) mixed into the episode seed, as
	// in persuarena eval: the same (seed, scenario, rollout) replays the
	// same persuadee.
	Rollout int `json:"rollout,omitempty"`
	// Reward overrides the server's reward mode for this episode.
	Reward RewardMode `json:"reward,omitempty"`
	// EpisodeID names the episode (OpenEnv's ResetRequest.episode_id);
	// "" generates one. At most 255 characters of [A-Za-z0-9._:-].
	EpisodeID string `json:"episode_id,omitempty"`
}

// Action is the persuader's turn: one utterance. It mirrors OpenEnv's
// Action model (which carries a free metadata object); unknown fields are
// rejected.
type Action struct {
	// Message is the persuader utterance: non-empty (after trimming
	// space), at most EnvConfig.MaxMessageBytes bytes.
	Message string `json:"message"`
	// Metadata is ignored by the environment (OpenEnv's Action.metadata).
	Metadata map[string]any `json:"metadata,omitempty"`
}

// View is what the persuader may see after a reset or a step: the wire
// format's "observation" object. It holds nothing of the hidden profile.
type View struct {
	// Reply is the persuadee's visible reply to the last action; "" after
	// a reset.
	Reply string `json:"reply"`
	// Turn is the number of persuader turns so far, 0..Tmax.
	Turn int `json:"turn"`
	// Tmax is the episode's turn limit.
	Tmax int `json:"tmax"`
	// Decision is the persuadee's decision in Reply: continue, accept,
	// conditional or reject; pending when Turn reached Tmax without one;
	// truncated when the conversation outgrew the persuadee's context.
	// "continue" after a reset.
	Decision string `json:"decision"`
	// Scenario is the public scenario (scenario.Public): sent once per
	// episode, in the reset's observation; nil (absent on the wire) in
	// every step's, which keeps step bodies small (the scenario is about
	// 0.9 KB). A client keeps the one it got at reset.
	Scenario *scenario.Public `json:"scenario,omitempty"`
}

// Metadata is the machine-readable side of an observation: rewards and
// their parts, read-outs and bookkeeping. A trainer uses it for rewards
// and logging; it should not go into the persuader's prompt.
type Metadata struct {
	// EpisodeID identifies the episode (also in State).
	EpisodeID string `json:"episode_id"`
	// RewardMode is the episode's reward mode.
	RewardMode RewardMode `json:"reward_mode"`
	// Acts are the persuasion acts the tagger read in the action's message
	// (Probe-RPO paper, Figure 5); empty after a reset.
	Acts []string `json:"acts"`
	// Belief is B_t in [0, 1] after this step (B_0 after a reset); null
	// when every probe was unreadable.
	Belief *float64 `json:"belief"`
	// Dense is r_t = B_t - B_{t-1} over the probes readable at both t-1
	// and t; null after a reset and when there are none.
	Dense *float64 `json:"dense"`
	// DenseProbes is the number of probes Dense was computed over when
	// that is fewer than the basis's (episode.Turn.DenseProbes); absent
	// when it used every probe.
	DenseProbes int `json:"dense_probes,omitempty"`
	// RewardMissing is true when the dense part of the reward was due but
	// missing (Dense is null) and was replaced by 0.
	RewardMissing bool `json:"reward_missing"`
	// Terminal is the episode's terminal state once done (accept,
	// conditional, pending, reject, truncated or failed); "" before.
	Terminal decision.Terminal `json:"terminal"`
	// RGoal, RStrategy and ROut are R_goal, R_strategy and R_out (Probe-RPO paper),
	// set on the last step only. RStrategy is null without a judge.
	RGoal     *float64 `json:"r_goal,omitempty"`
	RStrategy *float64 `json:"r_strategy,omitempty"`
	ROut      *float64 `json:"r_out,omitempty"`
	// StrategyError is the judge's error, when it failed (R_strategy = 0).
	StrategyError string `json:"strategy_error,omitempty"`
	// RewardVector is the reward spec's vector of the finished episode
	// (EnvConfig.Rewarder; the REPO paper's named components, per episode
	// and per turn), set on the last step only; its R is then ROut.
	RewardVector *episode.RewardVector `json:"reward_vector,omitempty"`
}

// Observation is the full result of a reset or step, shaped like OpenEnv's
// Observation model: the visible View plus done, reward and metadata. On
// the wire done and reward are lifted next to the view (see Result).
type Observation struct {
	View
	Done bool `json:"done"`
	// Reward is the step's reward; null after a reset.
	Reward   *float64 `json:"reward"`
	Metadata Metadata `json:"metadata"`
}

// WireObservation is the "observation" object of the wire format: the
// visible View plus the Metadata, under "metadata" (OpenEnv's
// Observation.metadata field).
//
// Choice: the metadata travels both here and at the top level of Result.
// OpenEnv's serialize_observation keeps Observation.metadata in the
// nested observation and also lifts it beside reward and done since
// huggingface/OpenEnv PR #805 (src/openenv/core/env_server/serialization.py,
// burtenshaw/OpenEnv 1f5446677713fa964b97ba1155a47be8cd20427f, the PR's
// head); typed clients read payload.get("metadata", obs.get("metadata",
// {})) and StepResult.metadata = payload.get("metadata") (PR #812,
// envs/*/client.py). Clients of the releases before (huggingface/OpenEnv
// 385de5ebb8d08d51d000d7dfc19de5f3c6a9c215 and older, whose
// GenericEnvClient._parse_result keeps only observation, reward and done)
// still find it in the observation.
type WireObservation struct {
	View
	Metadata Metadata `json:"metadata"`
}

// Result is an observation in OpenEnv's wire format, the fields of its
// ResetResponse and StepResponse: {"observation", "reward", "done",
// "metadata"}, the metadata both at the top level and inside the
// observation (see WireObservation; the two copies are equal). It is the
// data of a WebSocket "observation" message and the body of the /reset
// and /step responses.
type Result struct {
	Observation WireObservation `json:"observation"`
	Reward      *float64        `json:"reward"`
	Done        bool            `json:"done"`
	// Metadata is OpenEnv's top-level metadata (StepResult.metadata).
	Metadata Metadata `json:"metadata"`
}

// Result returns o in the wire format.
func (o Observation) Result() Result {
	return Result{Observation: WireObservation{View: o.View, Metadata: o.Metadata}, Reward: o.Reward, Done: o.Done, Metadata: o.Metadata}
}

// State is the episode's bookkeeping (OpenEnv's State: episode_id and
// step_count, plus PersuArena fields). It holds no hidden profile data.
type State struct {
	// EpisodeID is "" before the first reset.
	EpisodeID string `json:"episode_id"`
	// StepCount is the number of steps taken in the episode.
	StepCount int `json:"step_count"`
	// ScenarioID, Set and Split say what is played; Split is "all" when
	// the draw was over every split.
	ScenarioID string `json:"scenario_id"`
	Set        string `json:"set"`
	Split      string `json:"split"`
	// Seed and Rollout are the reset's (Seed drawn by the server when the
	// reset had none).
	Seed    uint64 `json:"seed"`
	Rollout int    `json:"rollout"`
	// Persuadee is the persuadee's name, e.g. "sim".
	Persuadee string `json:"persuadee"`
	// RewardMode and Tmax are the episode's (the defaults before a reset).
	RewardMode RewardMode `json:"reward_mode"`
	Tmax       int        `json:"tmax"`
	// Done reports whether the episode has ended.
	Done bool `json:"done"`
	// Terminal is the terminal state once done, else "".
	Terminal decision.Terminal `json:"terminal"`
	// Beliefs is B_0, B_1, ..., B_t (null where unreadable).
	Beliefs []*float64 `json:"beliefs"`
	// Rewards are the rewards returned by the steps so far.
	Rewards []float64 `json:"rewards"`
	// RGoal is R_goal once done, else null.
	RGoal *float64 `json:"r_goal"`
}

// Env is one environment session: at most one episode at a time between
// the external persuader (the client) and the configured persuadee. Each
// episode is an episode.Env, the turn engine episode.Run drives: the same
// seeds, tagging, probes, terminal rules and judge, so a client replaying
// a built-in persuader's utterances gets the transcript persuarena eval
// records. Env adds the wire concerns: scenario choice, validation,
// reward modes and the sink. An Env is used by one goroutine at a time.
type Env struct {
	f *Factory

	id       string
	active   bool // a reset succeeded
	done     bool
	set      string
	split    scenario.Split
	seed     uint64
	rollout  int
	mode     RewardMode
	sc       *scenario.Scenario
	run      *episode.Env
	beliefs  []*float64
	rewards  []float64
	terminal decision.Terminal
}

var episodeIDRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,255}$`)

// DecodeResetOptions parses reset data strictly: empty input or "null"
// means no options; unknown fields and wrong types are VALIDATION_ERRORs;
// malformed JSON (including trailing data) is INVALID_JSON.
func DecodeResetOptions(raw []byte) (ResetOptions, error) {
	var o ResetOptions
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return o, nil
	}
	return o, strictDecode(raw, &o, "reset data")
}

// DecodeAction parses an action strictly (see DecodeResetOptions); a
// missing or null action is a VALIDATION_ERROR. Limits are checked by Step.
func DecodeAction(raw []byte) (Action, error) {
	var a Action
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return a, errf(ValidationError, "action is missing: want {\"message\": \"...\"}")
	}
	return a, strictDecode(raw, &a, "action")
}

// strictDecode decodes one JSON value into v, rejecting malformed JSON
// (INVALID_JSON) and unknown fields (VALIDATION_ERROR).
func strictDecode(raw []byte, v any, what string) error {
	if !json.Valid(raw) {
		return errf(InvalidJSON, "%s is not valid JSON", what)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errf(ValidationError, "%s: %s", what, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// Reset starts a new episode, abandoning any unfinished one (it is not
// stored), and returns the initial observation: no reply, turn 0, B_0 in
// the metadata, a null reward.
//
// The scenario is opts.ScenarioID, or else pool[Mix(seed^3) mod n] of the
// chosen set and split. The episode seed is episode.Seed(seed,
// scenarioID, rollout) and the persuadee starts with episode.Mix(epSeed^2),
// as in episode.Run, so (seed, scenario, rollout) reproduce an eval
// episode's persuadee.
//
// Errors: VALIDATION_ERROR for bad options (unknown set, split, reward
// mode or scenario, negative rollout, malformed episode id);
// EXECUTION_ERROR when the persuadee fails to start or to be probed.
func (e *Env) Reset(ctx context.Context, opts ResetOptions) (Observation, error) {
	f := e.f
	cfg := &f.cfg
	set := opts.Set
	if set == "" {
		set = cfg.Sets[0].Name
	}
	pool, ok := f.pools[set]
	if !ok {
		names := make([]string, len(cfg.Sets))
		for i, s := range cfg.Sets {
			names[i] = s.Name
		}
		return Observation{}, errf(ValidationError, "unknown scenario set %q (this server has %s)", set, strings.Join(names, ", "))
	}
	split := cfg.Split
	if opts.Split != "" {
		var err error
		if split, err = scenario.ParseSplit(opts.Split); err != nil {
			return Observation{}, errf(ValidationError, "%v", err)
		}
	}
	mode := cfg.Reward
	if opts.Reward != "" {
		if !opts.Reward.valid() {
			return Observation{}, errf(ValidationError, "unknown reward mode %q (want dense, outcome or both)", opts.Reward)
		}
		mode = opts.Reward
	}
	if opts.Rollout < 0 {
		return Observation{}, errf(ValidationError, "rollout %d is negative", opts.Rollout)
	}
	if opts.EpisodeID != "" && !episodeIDRe.MatchString(opts.EpisodeID) {
		return Observation{}, errf(ValidationError, "episode_id must be 1-255 characters of A-Z a-z 0-9 . _ : -")
	}
	var seed uint64
	if opts.Seed != nil {
		seed = *opts.Seed
	} else {
		seed = episode.Mix(cfg.Seed ^ episode.Mix(f.auto.Add(1)))
	}
	cands := pool[split]
	var sc *scenario.Scenario
	if opts.ScenarioID != "" {
		for _, c := range cands {
			if c.ID == opts.ScenarioID {
				sc = c
				break
			}
		}
		if sc == nil {
			return Observation{}, errf(ValidationError, "scenario %q is not in set %s, split %s", opts.ScenarioID, set, splitName(split))
		}
	} else {
		if len(cands) == 0 {
			return Observation{}, errf(ValidationError, "set %s has no %s scenarios", set, splitName(split))
		}
		// Choice: the scenario is drawn with its own sub-seed (Mix(seed^3);
		// 1 and 2 are the persuader's and persuadee's in episode.Run); the
		// modulo bias is below n/2^64.
		sc = cands[episode.Mix(seed^3)%uint64(len(cands))]
	}
	id := opts.EpisodeID
	if id == "" {
		id = "ep-" + rand.Text()
	}

	epSeed := episode.Seed(seed, sc.ID, opts.Rollout)
	run := episode.NewEnv(episode.Config{Tmax: cfg.Tmax, Basis: cfg.Basis, Goal: cfg.Goal, Judge: cfg.Judge, Rewarder: cfg.Rewarder},
		sc, cfg.Persuadee, epSeed, episode.EnvOptions{Persuader: cfg.PersuaderName})
	err := run.Reset(ctx)
	var r0 episode.StepResult
	if err == nil {
		r0, err = run.Settle(ctx)
	}
	if err != nil {
		// A persuadee that fails to start leaves the previous episode as
		// it was; a failed initial read-out leaves no episode.
		if re := (*episode.RoleError)(nil); !errors.As(err, &re) || re.Role != episode.RolePersuadee {
			*e = Env{f: f}
		}
		return Observation{}, &Error{Code: ExecutionError, Message: err.Error(), Status: http.StatusInternalServerError}
	}
	b0 := r0.Turn.Belief
	*e = Env{f: f, id: id, set: set, split: split, seed: seed, rollout: opts.Rollout, mode: mode, sc: sc, run: run,
		beliefs: []*float64{b0}, rewards: []float64{}, active: true}
	pub := sc.Public()
	return Observation{
		View:     View{Decision: string(decision.Continue), Tmax: cfg.Tmax, Scenario: &pub},
		Metadata: Metadata{EpisodeID: id, RewardMode: mode, Acts: []string{}, Belief: b0},
	}, nil
}

// Step plays one persuader turn on the episode.Env: a.Message is tagged,
// the persuadee replies, the probes are read, and the reward of the
// episode's mode is returned (see RewardMode). A terminal decision ends
// the episode; so does Tmax (pending) and a context-window overflow
// (truncated, docs/engines.md). The finished episode goes to EnvConfig.Sink.
//
// Errors: VALIDATION_ERROR for a step before any reset, an empty message
// or one over MaxMessageBytes (nothing happens); EXECUTION_ERROR for a
// step on a finished episode (HTTP 409), or a persuadee or probe failure,
// which ends the episode as failed (HTTP 500). A cancelled ctx abandons
// the episode and returns ctx.Err().
func (e *Env) Step(ctx context.Context, a Action) (Observation, float64, bool, error) {
	cfg := &e.f.cfg
	if !e.active {
		return Observation{}, 0, false, errf(ValidationError, "step before reset: send a reset first")
	}
	if e.done {
		return Observation{}, 0, true, errf(ExecutionError, "episode %s is finished (%s); send a reset to start another", e.id, e.terminal)
	}
	if strings.TrimSpace(a.Message) == "" {
		return Observation{}, 0, false, errf(ValidationError, "action.message is empty")
	}
	if len(a.Message) > cfg.MaxMessageBytes {
		return Observation{}, 0, false, errf(ValidationError, "action.message is %d bytes, over the limit of %d", len(a.Message), cfg.MaxMessageBytes)
	}
	if err := ctx.Err(); err != nil {
		return Observation{}, 0, false, err
	}
	// The reply needs the settled belief: nothing overlaps the read-out.
	res, err := e.run.Step(ctx, episode.Utterance{Text: a.Message})
	if err == nil {
		res, err = e.run.Settle(ctx)
	}
	if err != nil {
		return e.fail(ctx, res.Turn, err)
	}
	e.beliefs = append(e.beliefs, res.Turn.Belief)
	dec := string(res.Turn.Decision)
	if res.Done {
		e.done, e.terminal = true, e.run.Episode().Terminal
		if e.terminal == decision.TermPending {
			dec = DecisionPending
		}
	}
	obs := e.observe(res.Turn, res.Turn.Persuadee, dec)
	return obs, *obs.Reward, obs.Done, nil
}

// fail reports the role error that ended the episode: a truncation is a
// normal end (truncated, R_goal of pending), anything else a failed
// episode and an EXECUTION_ERROR.
func (e *Env) fail(ctx context.Context, turn episode.Turn, err error) (Observation, float64, bool, error) {
	if ctx.Err() != nil {
		e.done, e.terminal = true, decision.TermFailed
		return Observation{}, 0, true, ctx.Err()
	}
	e.done, e.terminal = true, e.run.Episode().Terminal
	if e.terminal == decision.TermTruncated {
		obs := e.observe(turn, "", DecisionTruncated)
		return obs, *obs.Reward, true, nil
	}
	e.sink()
	return Observation{}, 0, true, &Error{Code: ExecutionError, Message: err.Error() + " (the episode ended as failed)", Status: http.StatusInternalServerError}
}

// observe builds the observation of a step and its reward, and hands a
// finished episode to the sink.
func (e *Env) observe(turn episode.Turn, reply, dec string) Observation {
	cfg := &e.f.cfg
	md := Metadata{EpisodeID: e.id, RewardMode: e.mode, Acts: turn.Acts, Belief: turn.Belief, Dense: turn.Dense, DenseProbes: turn.DenseProbes}
	var rw float64
	if e.mode == Dense || e.mode == Both {
		if turn.Dense != nil {
			rw = *turn.Dense
		} else {
			md.RewardMissing = true
		}
	}
	if e.done {
		ep := e.run.Episode()
		md.Terminal = e.terminal
		goal := ep.RGoal
		md.RGoal = &goal
		strategy := 0.0
		if cfg.Judge != nil {
			// episode.Env has judged the episode (Episode.RStrategy).
			md.RStrategy, md.StrategyError = ep.RStrategy, ep.JudgeError
			if ep.RStrategy != nil {
				strategy = *ep.RStrategy
			}
		}
		out := reward.Outcome(goal, strategy, e.f.w)
		if ep.Reward != nil {
			md.RewardVector, out = ep.Reward, ep.Reward.R
		}
		md.ROut = &out
		if e.mode == Outcome || e.mode == Both {
			rw += out
		}
	}
	e.rewards = append(e.rewards, rw)
	if e.done {
		e.sink()
	}
	return Observation{
		View:     View{Reply: reply, Turn: turn.T, Tmax: cfg.Tmax, Decision: dec},
		Done:     e.done,
		Reward:   &rw,
		Metadata: md,
	}
}

// sink hands the finished episode to EnvConfig.Sink.
func (e *Env) sink() {
	ep := e.Episode()
	if e.f.cfg.Sink == nil || ep == nil {
		return
	}
	ep.Rollout = int(e.f.seq.Add(1) - 1)
	if err := e.f.cfg.Sink(ep); err != nil {
		ep.Error = strings.TrimSpace(ep.Error + " (not stored: " + err.Error() + ")")
	}
}

// Episode returns the episode record so far (nil before a reset). It holds
// the hidden resistance type and must stay on the server.
func (e *Env) Episode() *episode.Episode {
	if e.run == nil {
		return nil
	}
	return e.run.Episode()
}

// Done reports whether the current episode has ended (false before a reset).
func (e *Env) Done() bool { return e.active && e.done }

// State returns the episode's bookkeeping; the zero State (with empty
// slices) before the first reset.
func (e *Env) State() State {
	st := State{Beliefs: []*float64{}, Rewards: []float64{}, RewardMode: e.f.cfg.Reward, Tmax: e.f.cfg.Tmax,
		Persuadee: e.f.cfg.Persuadee.Name()}
	if !e.active {
		return st
	}
	st.EpisodeID, st.ScenarioID, st.Set, st.Split = e.id, e.sc.ID, e.set, splitName(e.split)
	st.Seed, st.Rollout, st.RewardMode, st.Done, st.Terminal = e.seed, e.rollout, e.mode, e.done, e.terminal
	st.StepCount = len(e.rewards)
	st.Beliefs = slices.Clone(e.beliefs)
	st.Rewards = slices.Clone(e.rewards)
	if ep := e.Episode(); e.done && ep != nil && e.terminal != decision.TermFailed {
		g := ep.RGoal
		st.RGoal = &g
	}
	return st
}
