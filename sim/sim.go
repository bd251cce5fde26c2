// Package sim is PersuArena's embedded default persuadee: a seeded, LLM-free
// simulator of a person with a hidden profile (Probe-RPO paper, §2). It keeps
// a small latent state (openness, rapport, reactance, perceived
// persuasiveness, fatigue, and per-concern hidden -> voiced -> addressed)
// driven by the persuasion acts and concern mentions that package tagger
// reads from each persuader utterance, answers in natural language from a
// template bank, decides (accept, conditional, reject, continue), and answers
// the probe basis from its latent state (episode.Prober) without touching
// that state.
//
// Every rule, its equation and the psychology behind it are documented in
// docs/simulator.md and the pages under docs/simulator/; every number is a
// field of Config.
package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Persuadee is the simulator; it implements episode.Persuadee and its
// sessions implement episode.PersuadeeSession and episode.Prober. A
// Persuadee is immutable after New and safe for concurrent Start calls.
type Persuadee struct {
	cfg    Config
	reader perception.Reader
	preps  *scenario.Cache[*prep] // what its sessions derive from their scenarios
	err    error                  // from cfg.Validate, returned by Start
}

// New returns a simulator with configuration cfg. A zero Config means
// DefaultConfig(). An invalid cfg is reported by Start (see
// Config.Validate), so New never fails.
func New(cfg Config) *Persuadee {
	if cfg == (Config{}) {
		cfg = DefaultConfig()
	}
	if cfg.Name == "" {
		cfg.Name = "sim"
	}
	return &Persuadee{cfg: cfg, reader: perception.NewEmbedded(), preps: scenario.NewCache[*prep](maxPreps), err: cfg.Validate()}
}

// WithReader returns a copy of p that perceives persuader messages with
// reader r instead of the embedded reader; its name is p's name plus
// perception.ReaderPrefix and r's name ("sim+reader=llm:judge") unless r
// is the embedded reader.
func (p *Persuadee) WithReader(r perception.Reader) *Persuadee {
	q := *p
	q.reader = r
	if r.Name() != perception.EmbeddedName {
		q.cfg.Name = p.cfg.Name + perception.ReaderPrefix + r.Name()
	}
	return &q
}

// Reader returns the persuadee's reader.
func (p *Persuadee) Reader() perception.Reader { return p.reader }

// Name returns the configured name ("sim" by default).
func (p *Persuadee) Name() string { return p.cfg.Name }

// Config returns a copy of the persuadee's configuration.
func (p *Persuadee) Config() Config { return p.cfg }

// Version numbers the simulator's dynamics. Bump it whenever a change to
// this package alters replies, probes or decisions for the same Config, so
// that cached experiments keyed by Fingerprint are recomputed. Version 2:
// beliefs faithful to decisions and first-person replies (simulator v2).
// Version 3: reactions to the P4G persuader strategies, and the default
// is the shipped P4G fit (DefaultConfig). Version 4: the dynamics read a
// perception of each message (package perception), not tags and
// keyword mentions. Version 5: evidence diluted for EB, decisional
// conflict per consideration and plans settling only worries they touch
// for AA (docs/simulator/types.md). Version 6: the plan turns
// an avoider needs vary by person (TypeParams.PlanSpread). Version 7: the
// embedded reader reads what a sentence asserts (lists, denials,
// retractions and concessions answer nothing; a concern conceded is
// Conceded, which no plan settles; an answer to the worry just voiced
// counts without its words), manipulation by meaning (flattery,
// dismissal and false consensus too), through package prose.
const Version = 7

// Fingerprint identifies the persuadee's behaviour for caching: the
// dynamics Version and an FNV-64a hash of every configuration field, as
// "sim/v3/0123456789abcdef". Two persuadees with equal fingerprints give
// the same transcripts for the same scenario and seed.
func (p *Persuadee) Fingerprint() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%#v", p.cfg) // every field, in declaration order
	h.Write([]byte(p.reader.Name()))
	return fmt.Sprintf("sim/v%d/%016x", Version, h.Sum64())
}

// concernState is a concern's place in hidden -> voiced -> addressed.
type concernState uint8

const (
	hidden concernState = iota
	voiced
	addressed
)

// voicing records one concern voiced in the current reply and why.
type voicing struct {
	idx int
	how reaction // rVoiceAsked, rVoiceTouched or rVoiceAsk
}

// events is what happened in the current turn, for the reply text.
type events struct {
	voiced    []voicing
	nAddr     int
	bad       bool // the type's characteristic misstep (backfire, hardening, ...)
	ask       bool
	diag      bool
	nothing   bool // asked for concerns, none left to voice
	gain      float64
	decision  decision.Decision
	condition int // concern index named by a conditional, or -1
	rejectWhy rejectReason
}

type rejectReason uint8

const (
	rejectReactance rejectReason = iota
	rejectPressure
	rejectFirm
)

// session is one episode of the simulator.
type session struct {
	cfg  *Config
	tp   *TypeParams
	sc   *scenario.Scenario
	kind int // index into scenario.Resistances: 0 EB, 1 IT, 2 AR, 3 AA
	dyn  *rand.Rand
	txt  *rand.Rand
	// word draws the template choices of one reply; wordSrc is reseeded
	// from txt for each reply.
	word    *rand.Rand
	wordSrc *rand.PCG
	// rngs and srcs hold the three streams and their sources inside the
	// session, so starting an episode allocates none of them.
	rngs [3]rand.Rand
	srcs [3]rand.PCG

	// trait-derived multipliers (1 when traits are absent)
	recv, evW, rapW, planW, reactW, noiseSD, accept float64

	// person scales this person's positive openness gains (FirmShare,
	// FirmGain, PersonSD; drawn at the start); firm marks a firm person,
	// whose openness never rises more than FirmCap above o0.
	person float64
	firm   bool

	o0, o, u, rho, q float64
	state            []concernState
	plans            int // turns with plan detail so far
	// need is the number of turns of plan detail the persuadee needs
	// before it answers an ask: the person's plans0 (the type's Plans
	// spread by PlanSpread), raised by Conflict for each of evidence and
	// autonomy support in a new message, up to plans0 + MaxConflict.
	need, plans0     int
	argues           int // turns that answered a concern so far (ArgueGain)
	asks, pressTurns int
	turn             int
	ended            bool
	// term is the concern named as the condition of a conditional yes, or
	// -1: no longer counted as an obstacle (see obstacles).
	term int

	ev events
	// reader perceives the persuader's messages (package perception).
	reader perception.Session
	// trust in [0, 1] damps every openness gain; unsupported claims lower
	// it. echoes counts turns that mostly echoed the persuadee's words;
	// lastVoiced reports whether the previous reply voiced a concern.
	trust      float64
	echoes     int
	lastVoiced bool
	last       string
	// opener is the opening template of the reply being composed;
	// lastOpener that of the previous reply.
	opener, lastOpener *tmpl
	buf                []byte
	fill               fill

	// Inline backing arrays for state, touched, ev.voiced and buf, used
	// when they fit, so starting an episode allocates the session alone.
	stateArr  [inlineConcerns]concernState
	voicedArr [inlineVoiced]voicing
	bufArr    [512]byte
}

// The sizes of session's inline arrays: concerns per scenario and
// concerns voiced per reply (Config.MaxVoice + 1) that need no allocation.
const (
	inlineConcerns = 16
	inlineVoiced   = 4
)

const (
	kEB = iota
	kIT
	kAR
	kAA
)

// Start begins an episode on sc with the given seed. It returns the
// configuration error of New, or an error when sc's resistance type is not
// one of EB, IT, AR, AA. The scenario must not change during the episode.
func (p *Persuadee) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	return p.start(ctx, sc, seed)
}

func (p *Persuadee) start(ctx context.Context, sc *scenario.Scenario, seed uint64) (*session, error) {
	if p.err != nil {
		return nil, p.err
	}
	if sc == nil {
		return nil, errors.New("sim: nil scenario")
	}
	s := &session{cfg: &p.cfg, sc: sc}
	kind := -1
	for i, r := range scenario.Resistances {
		if r == sc.Hidden.Resistance {
			kind = i
		}
	}
	if kind < 0 {
		return nil, fmt.Errorf("sim: scenario %s: hidden.resistance %q is not EB, IT, AR or AA", sc.ID, sc.Hidden.Resistance)
	}
	s.kind = kind
	s.tp, _ = p.cfg.Type(sc.Hidden.Resistance)
	// Two independent streams: dynamics and wording, so rewording the
	// template bank never changes outcomes.
	s.srcs[0].Seed(seed, 0x73696d2d64796e) // "sim-dyn"
	s.srcs[1].Seed(seed, 0x73696d2d747874) // "sim-txt"
	s.wordSrc = &s.srcs[2]
	for i := range s.rngs {
		s.rngs[i] = *rand.New(&s.srcs[i])
	}
	s.dyn, s.txt, s.word = &s.rngs[0], &s.rngs[1], &s.rngs[2]
	s.applyTraits(sc.Hidden.Traits)
	s.drawPerson(seed)
	s.need = s.plans0

	s.o0 = clamp(sc.Hidden.InitialStance, -1, 1)
	s.o = s.o0
	ci := len(p.cfg.Rapport0) - 1
	for i, c := range scenario.Closenesses {
		if c == sc.Closeness {
			ci = i
		}
	}
	s.u = p.cfg.Rapport0[ci]
	s.q = p.cfg.Q0
	if n := len(sc.Hidden.Concerns); n <= inlineConcerns {
		s.state = s.stateArr[:n]
	} else {
		s.state = make([]concernState, n)
	}
	pr := p.prepOf(sc)
	rs, err := p.reader.Start(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("sim: reader %s: %w", p.reader.Name(), err)
	}
	s.reader, s.trust = rs, 1
	// a reply voices at most every concern, whatever MaxVoice a config sets
	if n := min(p.cfg.MaxVoice, len(s.state)) + 1; n <= inlineVoiced {
		s.ev.voiced = s.voicedArr[:0]
	} else {
		s.ev.voiced = make([]voicing, 0, n)
	}
	s.ev.condition = -1
	s.term = -1
	s.buf = s.bufArr[:0]
	s.fill = pr.fill
	return s, nil
}

// drawPerson draws this person's variation from its own stream of the
// seed (Config.FirmShare, FirmGain, PersonSD, TypeParams.PlanSpread):
// whether the person is firm, then a log-normal factor on its positive
// gains, one on its reactance, and the turns of plan detail it needs.
// Choice: the draws are made whatever the parameters, so a change of
// FirmShare, PersonSD or PlanSpread never reorders another draw.
func (s *session) drawPerson(seed uint64) {
	c := s.cfg
	var src rand.PCG
	src.Seed(seed, 0x73696d2d70736e) // "sim-psn"
	r := rand.New(&src)
	firm := r.Float64() < c.FirmShare
	zg, zr := r.NormFloat64(), r.NormFloat64()
	s.person = math.Exp(c.PersonSD * zg)
	s.firm = firm
	if firm {
		s.person *= c.FirmGain
	}
	s.reactW *= math.Exp(c.PersonSD * zr)
	// uniform on {-PlanSpread, ..., +PlanSpread}; v < 1, so k <= PlanSpread
	k := int(r.Float64() * float64(2*s.tp.PlanSpread+1))
	s.plans0 = s.tp.Plans + k - s.tp.PlanSpread
}

// traitZ maps a survey score to z in [-1, 1] around its scale midpoint;
// absent traits give 0. Scales follow the P4G surveys (data/README.md):
// Big Five and decision style 1-5, moral foundations and Schwartz values
// 1-6.
func traitZ(t map[string]float64, key string, lo, hi float64) float64 {
	v, ok := t[key]
	if !ok || math.IsNaN(v) {
		return 0
	}
	mid, half := (lo+hi)/2, (hi-lo)/2
	return clamp((v-mid)/half, -1, 1)
}

// applyTraits sets the trait multipliers (docs/simulator/model.md, "Traits").
func (s *session) applyTraits(t map[string]float64) {
	c := s.cfg
	agree := traitZ(t, "agreeable", 1, 5)
	open := traitZ(t, "open", 1, 5)
	consc := traitZ(t, "conscientious", 1, 5)
	neuro := traitZ(t, "neurotic", 1, 5)
	rational := traitZ(t, "rational", 1, 5)
	intuitive := traitZ(t, "intuitive", 1, 5)
	selfdir := (traitZ(t, "self_direction", 1, 6) + traitZ(t, "freedom", 1, 6)) / 2
	conform := traitZ(t, "conform", 1, 6)
	s.recv = math.Max(0, 1+c.TraitAgree*agree+c.TraitOpen*open)
	s.evW = math.Max(0, 1+c.TraitRational*rational)
	s.rapW = math.Max(0, 1+c.TraitIntuitive*intuitive)
	s.planW = math.Max(0, 1+c.TraitConscientious*consc)
	s.reactW = math.Max(0, 1+c.TraitSelfDirection*selfdir-c.TraitConform*conform)
	s.noiseSD = math.Max(0, c.NoiseSD*(1+c.TraitNeuroticNoise*neuro))
	s.accept = c.Accept + c.TraitNeuroticAccept*neuro
}

// TagUtterance returns tagger.Tag(text) (episode.UtteranceTagger): the
// engine's act tags, kept for analysis and planner features. The
// simulator's dynamics never read them; they read the reader's
// perception of the message (Reply).
func (s *session) TagUtterance(text string) tagger.Tags {
	if t, ok := s.reader.(perception.Tagger); ok {
		return t.Tags(text)
	}
	return tagger.Tag(text)
}

// Reply perceives the persuader's latest utterance (the last message of
// transcript) through the persuadee's reader (package perception; the
// embedded reader by default), updates the latent state from that
// perception alone and returns the reply text and decision, with the
// reader's engine usage as the reply's (zero for the embedded reader).
// It returns an error when transcript is empty, its last message is not
// the persuader's, the episode has already ended with a terminal
// decision, or the reader fails (wrapping perception.ErrFailedRead: the
// episode records a failed read, never a guessed perception).
func (s *session) Reply(ctx context.Context, transcript []episode.Message) (episode.Reply, error) {
	if len(transcript) == 0 || transcript[len(transcript)-1].Speaker != episode.PersuaderSpeaker {
		return episode.Reply{}, errors.New("sim: Reply needs a transcript ending with a persuader message")
	}
	if s.ended {
		return episode.Reply{}, errors.New("sim: episode already ended with a terminal decision")
	}
	pc, err := s.reader.Read(ctx, perception.Input{Transcript: transcript})
	if err != nil {
		return episode.Reply{}, fmt.Errorf("sim: reading the persuader's message: %w", err)
	}
	d := s.observe(&pc)
	// Choice: the reader's engine usage is the persuadee's
	// (Turn.PersuadeeUsage): the reader is the persuadee's perception, so
	// reading the message is part of the cost of its reply, and eval's cost
	// table, the run store and the viewer need no role of their own for it.
	return episode.Reply{Text: s.render(), Decision: d, Usage: pc.Usage}, nil
}

func (s *session) voice(i int, how reaction) {
	s.state[i] = voiced
	s.ev.voiced = append(s.ev.voiced, voicing{idx: i, how: how})
}

// firstHidden returns the most salient hidden concern among the first n
// (concerns are listed by salience), or -1.
func (s *session) firstHidden(n int) int {
	for i := 0; i < n && i < len(s.state); i++ {
		if s.state[i] == hidden {
			return i
		}
	}
	return -1
}

// firstOpen returns the most salient voiced but unaddressed concern among
// the first n, or -1.
func (s *session) firstOpen(n int) int {
	for i := 0; i < n && i < len(s.state); i++ {
		if s.state[i] == voiced {
			return i
		}
	}
	return -1
}

func (s *session) countState(st concernState) int {
	n := 0
	for _, x := range s.state {
		if x == st {
			n++
		}
	}
	return n
}

// Probe answers the basis from the latent state (episode.Prober): "ca"
// from rapport and the share of voiced concerns addressed, "pe" from the
// perceived-persuasiveness EMA, "ac" from the willingness (openness
// relative to the accept threshold, less ACBlock per obstacle), each as
// p = sigmoid(K (score - C)) (docs/simulator/probes.md).
// The agreement probe (probe.Agreement, id "agree") reads openness:
// p = (1 + o)/2 (Agreement). Choice: a probe id outside the default basis
// and "agree" (a user basis) gets the mean of the three, the belief level
// B_t itself. Probe reads the state
// only: it never changes it or draws randomness, so probing cannot change
// the transcript (the discarded fork of the Probe-RPO paper). It never fails.
func (s *session) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	ca, pe, ac := s.probs()
	ag := Agreement(s.o)
	out := make([]probe.Answer, len(basis))
	top := make([]probe.TokenLogprob, 2*len(basis)) // one backing array for all answers
	for k, pr := range basis {
		p := probeP(pr.ID, ca, pe, ac, ag)
		// as probe.FromProbability(p), without its per-answer allocation
		p = min(max(p, 1e-12), 1-1e-12)
		top[2*k] = probe.TokenLogprob{Token: "Yes", ID: -1, Logprob: math.Log(p)}
		top[2*k+1] = probe.TokenLogprob{Token: "No", ID: -1, Logprob: math.Log1p(-p)}
		out[k] = probe.Answer{Top: top[2*k : 2*k+2 : 2*k+2]}
	}
	return out, nil
}

// ProbeProbabilities appends P(Yes) of each probe of basis to dst
// (episode.ProbabilityProber): the p that Probe encodes as Yes/No
// log-probs, so reading these through probe.ReadProbability gives exactly
// the Readings of Probe's answers. Like Probe it reads the state only.
func (s *session) ProbeProbabilities(dst []float64, basis probe.Basis) []float64 {
	ca, pe, ac := s.probs()
	ag := Agreement(s.o)
	for _, pr := range basis {
		dst = append(dst, probeP(pr.ID, ca, pe, ac, ag))
	}
	return dst
}

// probeP is the P(Yes) of probe id given the CA, PE, AC and agreement
// probabilities: the mean of the first three for an id outside the
// default basis and the agreement probe.
func probeP(id string, ca, pe, ac, ag float64) float64 {
	switch id {
	case probe.Agreement.ID:
		return ag
	case "ca":
		return ca
	case "pe":
		return pe
	case "ac":
		return ac
	}
	return (ca + pe + ac) / 3
}

// Agreement maps openness o in [-1, 1] to the agreement probe's P(Yes),
// (1 + o)/2 in [0, 1] (docs/simulator/probes.md).
//
// Choice: the inverse of the stance a PersuasionTrace round starts from
// (initial_stance = 2b - 1, package persuasiontrace), so B_0 is the
// person's reported initial belief exactly and a change of openness is
// twice the change of reported agreement. Linear, because openness is
// the simulator's own scale of agreement with the proposal and a person's
// slider is read as a probability (the PersuasionTrace paper models the
// report as belief in the proposition); the decision gates and the Default
// basis stay on o as before.
func Agreement(o float64) float64 { return clamp((1+o)/2, 0, 1) }

// probs returns P(Yes) of the CA, PE and AC probes.
func (s *session) probs() (ca, pe, ac float64) {
	c := s.cfg
	ca = sigmoid(c.CAK * (c.CAWeight*s.u + (1-c.CAWeight)*s.addressedShare() - c.CAC))
	pe = sigmoid(c.PEK * (s.q - c.PEC))
	ac = sigmoid(c.ACK * (s.willing() - c.ACC))
	return ca, pe, ac
}

// willing is the persuadee's willingness to say an outright yes now, on
// o's scale: openness relative to its accept threshold, less ACBlock per
// obstacle it knows of. AC reads it; PE follows it with a lag.
func (s *session) willing() float64 {
	return s.o - s.accept - s.cfg.ACBlock*float64(s.obstacles())
}

// obstacles counts what the persuadee knows would stop an outright yes to
// an ask now, besides its openness: each open (voiced, unaddressed)
// concern among the first Blocking, each hidden one there when an ask
// would make it raise it (Surface), and each turn of plan detail the
// person still needs (need, from its type's Plans spread by PlanSpread). Reactance is left out on purpose: it decays on its own, and
// a read-out that rose with time alone would pay for silence.
func (s *session) obstacles() int {
	n := max(0, s.need-s.plans)
	for i := 0; i < s.cfg.Blocking && i < len(s.state); i++ {
		if i != s.term && (s.state[i] == voiced || s.state[i] == hidden && s.tp.Surface) {
			n++
		}
	}
	return n
}

// addressedShare is the share of the persuadee's concerns it counts as
// addressed: addressed / (voiced + addressed + hidden blocking + missing
// plans), where hidden blocking are the still-hidden concerns among the
// first Blocking (the ones an ask would raise: the persuadee knows its own
// worries, voiced or not) and missing plans are the turns of plan detail
// the person still needs before it answers an ask (AA: "how would I even
// do it?"). 0 when the denominator is 0.
func (s *session) addressedShare() float64 {
	v, a, h := 0, 0, max(0, s.need-s.plans)
	for i, x := range s.state {
		switch {
		case x == voiced:
			v++
		case x == addressed:
			a++
		case i < s.cfg.Blocking:
			h++
		}
	}
	if v+a+h == 0 {
		return 0
	}
	return float64(a) / float64(v+a+h)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// clamp is math.Min(math.Max(x, lo), hi); the built-in min and max
// treat NaN, infinities and signed zeros as math.Min and math.Max do, and
// compile to a few instructions instead of a call.
func clamp(x, lo, hi float64) float64 { return min(max(x, lo), hi) }
