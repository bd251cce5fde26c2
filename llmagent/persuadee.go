package llmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// ProbePath is how a persuadee's probes reach the engine (Probe-RPO paper;
// docs/engines.md).
type ProbePath string

// The probe paths.
const (
	// ProbeAuto picks ProbeCompletions on vLLM and SGLang when the engine
	// takes prompt lists and renders chat templates, else ProbeChat.
	ProbeAuto ProbePath = ""
	// ProbeCompletions sends all K probe forks, rendered with the engine's
	// chat template, in one /v1/completions request, reading the exact
	// Yes/No token ids' log-probs where the engine offers them (vLLM
	// logprob_token_ids), else the top log-probs.
	ProbeCompletions ProbePath = "completions"
	// ProbeChat sends K concurrent one-token chat requests with top
	// log-probs.
	ProbeChat ProbePath = "chat"
)

// DefaultMinAnswerMass is the least pooled P(Yes) + P(No) at the first
// answer position for a probe to be readable.
//
// Choice: 0.01. Exact token-id log-probs report arbitrarily small masses
// (a thinking model about to open "<think>", a reply starting with
// markdown); a ratio of two near-zero masses is not an answer, so such a
// probe is unreadable (missing), as docs/engines.md asks when neither answer
// carries mass. Top-20 read-outs rarely see masses this small anyway.
const DefaultMinAnswerMass = 0.01

// PersuadeeOptions configures an LLM persuadee.
type PersuadeeOptions struct {
	// Structured selects the decision protocol: nil takes the role's
	// (llm.Role.Structured: the tagged last line by default, "auto" for
	// JSON structured output where the engine honours it, "true" for JSON
	// always); a non-nil value forces JSON (true) or the tagged line
	// (false). Probe forks use the tagged-line protocol's prompt whatever
	// the replies use (docs/llm-roles.md).
	Structured *bool
	// Judge, when set, reads each reply's decision instead of a protocol:
	// the persuadee is then not asked for a decision (the
	// terminal-state check). Its usage is added to the reply's usage.
	Judge *Judge
	// ProbePath forces a probe path; ProbeAuto picks one.
	ProbePath ProbePath
	// MinAnswerMass overrides DefaultMinAnswerMass (0 = default, < 0 =
	// no minimum).
	MinAnswerMass float64
	// Variant selects the persuadee's conduct (soft, hard); "" takes the
	// role's Variant (llm.Role.Variant, persuarena.yaml "variant:").
	Variant Variant
}

// Persuadee is an LLM persuadee (docs/llm-roles.md): an episode.Persuadee whose
// sessions reply through an OpenAI-compatible engine and are probed in
// discarded forks of their context (episode.Prober). It is safe for
// concurrent use; the engine's capabilities, chat-template skeleton and
// Yes/No token ids are looked up once and shared.
type Persuadee struct {
	name string
	eng  engine
	role llm.Role
	opts PersuadeeOptions

	mu    sync.Mutex
	ready bool
	caps  llm.Capabilities
	path  ProbePath
	skel  *skeleton      // nil: render each fork with ApplyTemplate
	ids   map[int]string // Yes/No variant token id -> "Yes" / "No"
	idLst []int

	tmu   sync.Mutex
	tails map[string]int // token count of each fork tail (probe question + template tail)

	replies, violations, repairs, cut atomic.Int64
}

// NewPersuadee returns an LLM persuadee named name (e.g. "llm:qwen")
// replying through c with role's sampling and thinking settings, and the
// conduct variant of opts.Variant, else of role.Variant (an unknown role
// variant, which llm.LoadConfig rejects, counts as the default).
func NewPersuadee(name string, c *llm.Client, role llm.Role, opts PersuadeeOptions) *Persuadee {
	return newPersuadee(name, c, role, opts)
}

func newPersuadee(name string, e engine, role llm.Role, opts PersuadeeOptions) *Persuadee {
	if opts.Variant == VariantDefault {
		opts.Variant, _ = ParseVariant(role.Variant)
	}
	return &Persuadee{name: name, eng: asRole(e), role: role, opts: opts}
}

// Variant returns the persuadee's conduct variant.
func (p *Persuadee) Variant() Variant { return p.opts.Variant }

// Name implements episode.Persuadee.
func (p *Persuadee) Name() string { return p.name }

// Stats are a persuadee's running protocol counts, over all its sessions.
type Stats struct {
	// Replies is the number of replies produced.
	Replies int64 `json:"replies"`
	// Repairs is the number of replies that were sent one repair request:
	// those without a readable decision, and those cut off at the length
	// limit (asked again with twice the limit).
	Repairs int64 `json:"repairs"`
	// Violations is the number of replies that still had no readable
	// decision after the repair: protocol violations, treated as continue
	// (never acceptance), docs/engines.md. Cut replies are among them.
	Violations int64 `json:"violations"`
	// Cut is the number of replies the engine cut off at the length limit
	// (finish_reason "length") even when asked again with twice the
	// limit: their complete sentences were shown and their decision is
	// continue (a violation).
	Cut int64 `json:"cut"`
}

// Stats returns the protocol counts so far.
func (p *Persuadee) Stats() Stats {
	return Stats{Replies: p.replies.Load(), Repairs: p.repairs.Load(), Violations: p.violations.Load(), Cut: p.cut.Load()}
}

// Path returns the probe path in use (after the first Start); ProbeAuto
// before.
func (p *Persuadee) Path() ProbePath {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.path
}

// setup detects capabilities and prepares the probe path once; a failure
// is not cached, so the next Start tries again.
func (p *Persuadee) setup(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready {
		return nil
	}
	caps, err := p.eng.Detect(ctx)
	if err != nil {
		return err
	}
	eng := p.eng.Backend().Engine
	path := p.opts.ProbePath
	if path == ProbeAuto {
		path = ProbeChat
		if (eng == llm.VLLM || eng == llm.SGLang || eng == llm.LlamaCpp) && caps.PromptLists && caps.ApplyTemplate && caps.CompletionLogprobs {
			path = ProbeCompletions
		}
	}
	var skel *skeleton
	var ids map[int]string
	var idLst []int
	if path == ProbeCompletions {
		if !caps.ApplyTemplate {
			return fmt.Errorf("%w: probes on /v1/completions need the engine's chat template (apply-template endpoint); use the chat probe path", llm.ErrUnsupported)
		}
		// The skeleton and the Yes/No ids are independent look-ups, made
		// at once (every episode waits for this set-up); the ids go unused
		// when the probes fall back to the chat path.
		var idErr error
		var wg sync.WaitGroup
		if caps.TokenIDLogprobs && caps.Tokenize {
			wg.Go(func() { ids, idLst, idErr = yesNoIDs(ctx, p.eng) })
		}
		skel, err = learnSkeleton(ctx, p.eng)
		wg.Wait()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errNoMarkup) && p.opts.ProbePath == ProbeAuto:
			// The rendered "template" adds no chat markup (e.g. special
			// tokens lost in a detokenize round trip): raw prompts would not
			// be the persuadee's context, so probe through chat instead.
			path, skel, ids, idLst = ProbeChat, nil, nil, nil
		case err != nil && !errors.Is(err, errSkeleton):
			return fmt.Errorf("chat template: %w", err)
		}
		// A template the skeleton cannot reproduce is rendered per fork.
		if path == ProbeCompletions && idErr != nil {
			return idErr
		}
	}
	p.caps, p.path, p.skel, p.ids, p.idLst, p.ready = caps, path, skel, ids, idLst, true
	return nil
}

// yesNoVariants are the answer spellings whose single-token ids are read
// exactly (docs/engines.md: variants are pooled).
var yesNoVariants = []string{"Yes", " Yes", "yes", " yes", "YES", " YES", "No", " No", "no", " no", "NO", " NO"}

// yesNoIDs looks up the token id of every single-token Yes/No variant.
// The variants are tokenized concurrently (independent requests: every
// episode waits for this set-up, one engine round trip instead of one per
// variant, which under engine faults also means one retry path instead of
// twelve in a row) and read in yesNoVariants order, so the result does
// not depend on their timing; the first variant's error, in that order,
// is returned.
func yesNoIDs(ctx context.Context, e engine) (map[int]string, []int, error) {
	toks := make([][]int, len(yesNoVariants))
	errs := make([]error, len(yesNoVariants))
	var wg sync.WaitGroup
	for i, v := range yesNoVariants {
		wg.Go(func() { toks[i], errs[i] = e.Tokenize(ctx, v) })
	}
	wg.Wait()
	ids := map[int]string{}
	var lst []int
	for i, v := range yesNoVariants {
		toks, err := toks[i], errs[i]
		if err != nil {
			return nil, nil, fmt.Errorf("tokenize %q: %w", v, err)
		}
		if len(toks) != 1 {
			continue // multi-token spellings cannot be a first-token answer
		}
		word := "Yes"
		if strings.EqualFold(strings.TrimSpace(v), "no") {
			word = "No"
		}
		if _, dup := ids[toks[0]]; !dup {
			ids[toks[0]] = word
			lst = append(lst, toks[0])
		}
	}
	if len(lst) == 0 {
		return nil, nil, nil // fall back to top log-probs
	}
	return ids, lst, nil
}

// replySchema is the structured-output schema of a reply.
var replySchema = json.RawMessage(`{"type":"object","properties":{"reply":{"type":"string"},"decision":{"type":"string","enum":["continue","accept","conditional","reject"]}},"required":["reply","decision"],"additionalProperties":false}`)

// decisionSchema is the structured-output schema of a repair answer.
var decisionSchema = json.RawMessage(`{"type":"object","properties":{"decision":{"type":"string","enum":["continue","accept","conditional","reject"]}},"required":["decision"],"additionalProperties":false}`)

// Start implements episode.Persuadee: it renders sc's system prompt
// (public setting, role, hidden profile, the persuadee's variant) for a
// new session in the persuasion frame. Errors: the engine's capability
// detection failed or a needed capability is absent.
func (p *Persuadee) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	return p.StartFramed(ctx, sc, Framing{}, seed)
}

// StartFramed is Start with a task framing (masp.Play passes the framing
// of ESConv and CraigslistBargain cases: help-seeker, seller). The framing
// enters only this persuadee's own prompt. Errors as Start.
func (p *Persuadee) StartFramed(ctx context.Context, sc *scenario.Scenario, f Framing, seed uint64) (episode.PersuadeeSession, error) {
	if err := p.setup(ctx); err != nil {
		return nil, fmt.Errorf("llm persuadee %s: %w", p.name, err)
	}
	structured, err := p.structured()
	if err != nil {
		return nil, fmt.Errorf("llm persuadee %s: %w", p.name, err)
	}
	protocol := p.opts.Judge == nil
	s := &session{p: p, sc: sc, seed: seed, structured: structured && protocol, protocol: protocol, aff: affinity(p.eng)}
	s.sys = persuadeePrompt(sc, f, p.opts.Variant, s.structured, protocol)
	s.forkSys = s.sys
	if s.structured {
		s.forkSys = persuadeePrompt(sc, f, p.opts.Variant, false, protocol)
	}
	return s, nil
}

// structured reports whether replies use the JSON protocol: the option,
// else the role's Structured mode (llm.Role.Structured). Errors:
// "structured: true" on an engine that does not honour structured output
// (ErrUnsupported).
func (p *Persuadee) structured() (bool, error) {
	if p.opts.Structured != nil {
		return *p.opts.Structured, nil
	}
	switch p.role.Structured {
	case "auto":
		return p.caps.StructuredOutput, nil
	case "true":
		if !p.caps.StructuredOutput {
			return false, fmt.Errorf("%w: structured: true, but this engine does not honour structured output (use structured: auto or false)", llm.ErrUnsupported)
		}
		return true, nil
	}
	return false, nil
}

// CheckProbes detects the engine's capabilities (as the first Start does)
// and reports whether its probes can be read: an engine that returns no
// log-probabilities on the persuadee's probe path (Path: completions or
// chat requests) cannot, and the error names eval --probes none, the outcome-only evaluation that needs
// none (the Probe-RPO paper's Table 7 cross-persuadee protocol). Errors:
// the engine's detection error, or that one.
func (p *Persuadee) CheckProbes(ctx context.Context) error {
	if err := p.setup(ctx); err != nil {
		return fmt.Errorf("llm persuadee %s: %w", p.name, err)
	}
	p.mu.Lock()
	has := p.caps.ChatLogprobs
	if p.path == ProbeCompletions {
		has = p.caps.CompletionLogprobs
	}
	p.mu.Unlock()
	if !has {
		return fmt.Errorf("llm persuadee %s: %w on its probe path (%s), so its beliefs cannot be probed; evaluate it outcome-only with eval --probes none", p.name, llm.ErrLogprobsUnavailable, p.Path())
	}
	return nil
}

// session is one LLM persuadee episode. hist holds the persuadee's own
// replies (visible text and the decision applied), which its context
// shows in protocol form, while the transcript holds only the visible
// text. sys is the system prompt of its replies, forkSys that of its
// probe forks: the tagged-line protocol's, so no fork asks for JSON.
type session struct {
	p          *Persuadee
	sc         *scenario.Scenario
	seed       uint64
	sys        string
	forkSys    string
	structured bool
	protocol   bool
	hist       []ownReply
	n          int // requests made, for per-request seeds
	probeUsage episode.Usage
	violations int
	aff        *llm.Affinity // the episode's engine replica; nil for test engines
}

// Violations returns the session's protocol violations so far.
func (s *session) Violations() int { return s.violations }

var _ episode.ProbeUsageReporter = (*session)(nil)

// TakeProbeUsage returns the engine usage of the probe read-outs since the
// last call and resets it (episode.Run records it per turn).
func (s *session) TakeProbeUsage() episode.Usage {
	u := s.probeUsage
	s.probeUsage = episode.Usage{}
	return u
}

// ownReply is one of the persuadee's own replies as its context keeps it.
type ownReply struct {
	visible string
	d       decision.Decision
}

// messages is the persuadee's context for transcript: its system prompt,
// the persuader's utterances as user turns and its own replies (in
// protocol form) as assistant turns. fork selects a probe fork's context:
// forkSys and the replies in the tagged-line form, whatever protocol the
// replies use, so that a fork never primes a JSON answer (with the
// tagged-line protocol a fork is the reply context plus its question, a
// byte prefix extension the engine's prefix cache reuses). Contents are
// trimmed so that chat templates that trim render the same text as the
// skeleton.
//
// Its own replies are the last len(hist) persuadee messages; earlier ones
// are an opening context it did not produce (masp cases: the seller's
// greeting, the help-seeker's situation) and are shown as they are. A
// transcript that starts with a persuadee message gets persuadeeOpening as
// the first user turn, so roles alternate as chat templates expect.
func (s *session) messages(transcript []episode.Message, extra int, fork bool) []llm.Message {
	msgs := make([]llm.Message, 0, len(transcript)+2+extra)
	sys := s.sys
	if fork {
		sys = s.forkSys
	}
	msgs = append(msgs, llm.Message{Role: "system", Content: strings.TrimSpace(sys)})
	if len(transcript) > 0 && transcript[0].Speaker == episode.PersuadeeSpeaker {
		msgs = append(msgs, llm.Message{Role: "user", Content: persuadeeOpening})
	}
	n := 0
	for _, m := range transcript {
		if m.Speaker != episode.PersuaderSpeaker {
			n++
		}
	}
	k := len(s.hist) - n // index into hist of the next persuadee message
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			msgs = append(msgs, llm.Message{Role: "user", Content: strings.TrimSpace(m.Text)})
			continue
		}
		txt := m.Text
		if k >= 0 && k < len(s.hist) {
			txt = s.canonical(s.hist[k], s.structured && !fork)
		}
		k++
		msgs = append(msgs, llm.Message{Role: "assistant", Content: strings.TrimSpace(txt)})
	}
	return msgs
}

func (s *session) sampling() llm.Sampling {
	sp := s.p.role.Sampling
	if sp.Seed == nil {
		sp.Seed = requestSeed(s.seed, s.n)
	}
	s.n++
	return sp
}

// wrap adds scenario and turn to an engine error; context-length errors
// stay errors.Is(err, episode.ErrTruncated) (docs/engines.md).
func (s *session) wrap(what string, turn int, err error) error {
	return fmt.Errorf("llm persuadee %s: scenario %s turn %d %s: %w", s.p.name, s.sc.ID, turn, what, err)
}

func persuaderTurns(transcript []episode.Message) int {
	n := 0
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			n++
		}
	}
	return n
}

// Reply implements episode.PersuadeeSession (docs/llm-roles.md). The reply comes
// from one chat request with the role's sampling (structured output when
// the session uses it). A reply the engine cut off at its length limit
// (finish_reason "length") is asked for again once with twice the
// role's max_tokens (not when the role sets none: the engine's own limit
// would cut it again); cut again, it is shown only up to its last complete
// sentence (decision.CutReply), with decision continue, counted as a cut
// protocol violation (Stats.Cut, episode.Reply.Cut), and never asked for a
// decision. Otherwise its decision is parsed with decision.Parse; a reply
// without a readable decision gets one repair request (a fresh reply when
// the visible text is empty, e.g. cut off while thinking; else a request
// for the decision alone), and if that fails too the reply counts as a
// protocol violation and its decision is Continue, never acceptance. The
// returned Text is decision.StripDecision of the reply: no decision line,
// no reasoning. Usage sums every request made.
//
// Errors: the engine's (wrapped with scenario and turn); a context-length
// error wraps episode.ErrTruncated so the episode ends truncated.
func (s *session) Reply(ctx context.Context, transcript []episode.Message) (episode.Reply, error) {
	ctx = llm.WithAffinity(ctx, s.aff)
	turn := persuaderTurns(transcript)
	if len(transcript) == 0 || transcript[len(transcript)-1].Speaker != episode.PersuaderSpeaker {
		return episode.Reply{}, fmt.Errorf("llm persuadee %s: scenario %s: transcript must end with a persuader message", s.p.name, s.sc.ID)
	}
	msgs := s.messages(transcript, 2, false)
	req := llm.ChatRequest{Messages: msgs, Sampling: s.sampling(), Thinking: s.p.role.Thinking}
	if s.structured {
		req.JSONSchema = replySchema
	}
	resp, err := s.p.eng.Chat(ctx, req)
	if err != nil {
		return episode.Reply{}, s.wrap("reply", turn, err)
	}
	usage := resp.Usage
	if cutOff(resp) && req.Sampling.MaxTokens <= 0 {
		// Cut at the engine's own limit: asking again would hit it again.
		return s.record(decision.CutReply(resp.Content), decision.Continue, usage, true), nil
	}
	if cutOff(resp) {
		s.p.repairs.Add(1)
		req.Sampling = s.sampling()
		req.Sampling.MaxTokens *= 2 // Choice: twice the role's limit
		if resp, err = s.p.eng.Chat(ctx, req); err != nil {
			return episode.Reply{}, s.wrap("reply (repair of a cut reply)", turn, err)
		}
		usage = usage.Add(resp.Usage)
		if cutOff(resp) {
			return s.record(decision.CutReply(resp.Content), decision.Continue, usage, true), nil
		}
	}
	raw := resp.Content
	visible := decision.StripDecision(raw)
	d, ok := decision.Continue, true
	if s.protocol {
		d, ok = decision.Parse(raw)
	}
	if !ok {
		s.p.repairs.Add(1)
		if visible == "" {
			// Nothing visible (content null, a decision-less think block
			// that finished): ask for the whole reply again.
			req.Sampling = s.sampling()
			resp, err = s.p.eng.Chat(ctx, req)
			if err != nil {
				return episode.Reply{}, s.wrap("reply (repair)", turn, err)
			}
			usage = usage.Add(resp.Usage)
			if cutOff(resp) {
				return s.record(decision.CutReply(resp.Content), decision.Continue, usage, true), nil
			}
			visible = decision.StripDecision(resp.Content)
			d, ok = decision.Parse(resp.Content)
		} else {
			rep := llm.ChatRequest{
				Messages: append(msgs, llm.Message{Role: "assistant", Content: visible},
					llm.Message{Role: "user", Content: repairPrompt(s.structured)}),
				Sampling: s.sampling(), Thinking: ptr(false),
			}
			rep.Sampling.MaxTokens = 64 // Choice: one short line
			if s.structured {
				rep.JSONSchema = decisionSchema
			}
			resp, err = s.p.eng.Chat(ctx, rep)
			if err != nil {
				return episode.Reply{}, s.wrap("decision (repair)", turn, err)
			}
			usage = usage.Add(resp.Usage)
			d, ok = decision.Parse(resp.Content)
			if bare := strings.TrimSpace(decision.StripThink(resp.Content)); !ok && !s.structured && len(strings.Fields(bare)) <= 2 {
				// A bare value ("accept", "**reject**") answers the repair
				// question too; a sentence does not.
				d, ok = decision.Parse("DECISION: " + bare)
			}
		}
		if !ok {
			d = decision.Continue
			s.violations++
			s.p.violations.Add(1)
		}
	}
	if !s.protocol {
		j, u, err := s.p.opts.Judge.terminal(ctx, append(transcript[:len(transcript):len(transcript)],
			episode.Message{Speaker: episode.PersuadeeSpeaker, Text: visible}))
		usage = usage.Add(u)
		if err != nil {
			return episode.Reply{}, s.wrap("judge", turn, err)
		}
		d = j
	}
	return s.record(visible, d, usage, false), nil
}

// cutOff reports a reply the engine stopped at its length limit.
func cutOff(r *llm.ChatResponse) bool { return r.FinishReason == "length" }

// record counts a finished reply, appends it to the session's own replies
// and returns it; cut marks one still cut off after its repair (a
// protocol violation, decision continue).
func (s *session) record(visible string, d decision.Decision, usage episode.Usage, cut bool) episode.Reply {
	if cut {
		s.violations++
		s.p.violations.Add(1)
		s.p.cut.Add(1)
	}
	s.p.replies.Add(1)
	s.hist = append(s.hist, ownReply{visible: visible, d: d})
	return episode.Reply{Text: visible, Decision: d, Usage: usage, Cut: cut}
}

// canonical is a reply as the persuadee's own context keeps it: the
// visible text with its decision in protocol form, the JSON object when
// structured, else the tagged last line (no decision at all when the
// session follows no protocol).
//
// Choice: the context holds the normalised form rather than the raw
// output (markdown around the tag, reasoning), so every later request and
// probe fork shares one exact prefix, and a repaired or violating reply
// shows the decision that was actually applied.
func (s *session) canonical(r ownReply, structured bool) string {
	switch {
	case !s.protocol:
		return r.visible
	case structured:
		b, _ := json.Marshal(struct {
			Reply    string `json:"reply"`
			Decision string `json:"decision"`
		}{r.visible, string(r.d)})
		return string(b)
	}
	if r.visible == "" {
		return "DECISION: " + string(r.d)
	}
	return r.visible + "\nDECISION: " + string(r.d)
}

// probeSampling is the raw-distribution sampling of a probe request
// (docs/engines.md): temperature 1, top_p 1, top_k and min_p off, one token,
// no post-sampling probabilities; on llama-server the sampled token is
// pinned.
func probeSampling(e llm.Engine, completions bool) llm.Sampling {
	sp := llm.Sampling{Temperature: ptr(1.0), TopP: ptr(1.0), MaxTokens: 1}
	switch e {
	case llm.VLLM, llm.SGLang:
		sp.Extra = map[string]any{"top_k": -1, "min_p": 0}
		if completions && e == llm.VLLM {
			// The rendered template already holds any BOS text.
			sp.Extra["add_special_tokens"] = false
		}
	case llm.LlamaCpp:
		// The sampled token is pinned to "Yes": a draw of a byte token that
		// is an incomplete UTF-8 sequence makes llama-server answer content
		// "\uFFFD" with no log-probs. The read-out is unaffected: with
		// post_sampling_probs false the probabilities come from the raw
		// logits, before samplers such as the logit bias (docs/engines.md).
		sp.Extra = map[string]any{"top_k": 0, "min_p": 0, "post_sampling_probs": false,
			"logit_bias": []any{[]any{"Yes", 100}}}
	}
	return sp
}

// Probe implements episode.Prober (Probe-RPO paper; docs/engines.md): each
// probe question is asked as a user turn appended to a discarded fork of the
// persuadee's context (transcript; empty at t = 0), and the first answer
// token's log-probs are returned, one Answer per probe in basis order. The
// fork is the context in the tagged-line protocol (messages with fork
// set): its system prompt carries no JSON answer rule and its own past
// replies are text, whatever protocol the replies use, so the answer
// position is not primed for "{". On ProbeCompletions all forks go in one
// /v1/completions request; on ProbeChat, K concurrent chat requests.
// Thinking is always off for probes. Answers are marked TopK unless the
// engine read every Yes/No variant by token id (vLLM logprob_token_ids),
// so that probe.Read bounds an answer showing only one side. An answer
// whose pooled Yes + No mass is below the minimum is returned empty
// (unreadable, missing); one the engine answered with an artefact
// (llm.ArtefactError: post-sampling probabilities) is returned empty with
// the artefact as its Reason.
//
// Errors: llm.ErrLogprobsUnavailable (wrapped, its message naming --probes
// none) when a response carries no log-probs at all; engine errors wrapped
// with scenario and turn (a fork that outgrows the context window wraps
// episode.ErrTruncated: the episode records the turn's belief as missing).
func (s *session) Probe(ctx context.Context, transcript []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	ctx = llm.WithAffinity(ctx, s.aff)
	turn := persuaderTurns(transcript)
	msgs := s.messages(transcript, 1, true)
	var ans []probe.Answer
	var err error
	if s.p.path == ProbeCompletions {
		ans, err = s.probeCompletions(ctx, msgs, basis)
	} else {
		ans, err = s.probeChat(ctx, msgs, basis)
	}
	if errors.Is(err, llm.ErrLogprobsUnavailable) {
		err = fmt.Errorf("%w (eval --probes none evaluates this persuadee outcome-only, without probes)", err)
	}
	if err != nil {
		return nil, s.wrap("probe", turn, err)
	}
	min := s.p.opts.MinAnswerMass
	if min == 0 {
		min = DefaultMinAnswerMass
	}
	for k := range ans {
		if y, n := probe.Pool(ans[k]); y+n < min {
			ans[k] = probe.Answer{Top: []probe.TokenLogprob{}, TopK: ans[k].TopK, Reason: ans[k].Reason}
		}
	}
	return ans, nil
}

func (s *session) probeChat(ctx context.Context, msgs []llm.Message, basis probe.Basis) ([]probe.Answer, error) {
	eng := s.p.eng.Backend().Engine
	top := s.p.caps.MaxTopLogprobs
	if top <= 0 {
		top = 20
	}
	ans := make([]probe.Answer, len(basis))
	usages := make([]episode.Usage, len(basis))
	errs := make([]error, len(basis))
	var wg sync.WaitGroup
	for k, pr := range basis {
		fork := append(msgs[:len(msgs):len(msgs)], llm.Message{Role: "user", Content: probePrompt(pr.Question)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.p.eng.Chat(ctx, llm.ChatRequest{Messages: fork, Sampling: probeSampling(eng, false),
				Logprobs: true, TopLogprobs: top, Thinking: ptr(false)})
			if err != nil {
				errs[k], usages[k] = err, llm.UsageOf(err)
				return
			}
			usages[k] = resp.Usage
			if len(resp.Top) == 0 {
				errs[k] = llm.ErrLogprobsUnavailable
				return
			}
			ans[k] = probe.Answer{Top: resp.Top[0], TopK: true}
		}()
	}
	wg.Wait()
	for _, u := range usages {
		s.probeUsage = s.probeUsage.Add(u)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ans, nil
}

func (s *session) probeCompletions(ctx context.Context, msgs []llm.Message, basis probe.Basis) ([]probe.Answer, error) {
	p := s.p
	var prefix, suffix string
	if p.skel != nil {
		prefix, suffix = p.skel.fork(msgs)
	} else {
		var err error
		if prefix, suffix, err = renderFork(ctx, p.eng, msgs); err != nil {
			return nil, err
		}
	}
	prompts := make([]string, len(basis))
	for k, pr := range basis {
		prompts[k] = prefix + probePrompt(pr.Question) + suffix
	}
	top := p.caps.MaxTopLogprobs
	if top <= 0 {
		top = 20
	}
	req := llm.CompletionRequest{Prompts: prompts, Sampling: probeSampling(p.eng.Backend().Engine, true), Logprobs: top}
	// vLLM answers the Yes/No ids exactly (logprob_token_ids); every
	// other engine's list is a top-k, filtered by id.
	askIDs := len(p.idLst) > 0 && p.eng.Backend().Engine == llm.VLLM
	if len(p.idLst) > 0 {
		req.TokenIDs, req.TokenText = p.idLst, p.ids
		if askIDs {
			// vLLM returns the exact ids' log-probs (logprob_token_ids);
			// one top candidate keeps the response small. Other engines
			// ignore the ids: their top-k is filtered by id instead.
			req.Logprobs = 1
		}
	}
	resp, err := p.eng.Complete(ctx, req)
	if err != nil {
		s.probeUsage = s.probeUsage.Add(llm.UsageOf(err))
		return nil, err
	}
	u := resp.Usage
	if resp.Usage.Requests == 1 { // a retried call's counts cover several sends
		u.PromptOnceTokens = p.promptOnce(ctx, prompts, len(prefix), resp.Usage.PromptTokens)
	}
	s.probeUsage = s.probeUsage.Add(u)
	if len(resp.Choices) != len(prompts) {
		return nil, fmt.Errorf("%w: %d completion choices for %d probe prompts", llm.ErrMalformed, len(resp.Choices), len(prompts))
	}
	ans := make([]probe.Answer, len(basis))
	for _, c := range resp.Choices {
		if c.Index < 0 || c.Index >= len(ans) {
			return nil, fmt.Errorf("%w: completion choice index %d", llm.ErrMalformed, c.Index)
		}
		if c.Artefact != nil {
			// Unreadable with its reason (post-sampling probabilities),
			// never P = 1; the other probes still read.
			ans[c.Index] = probe.Answer{Top: []probe.TokenLogprob{}, TopK: !askIDs, Reason: c.Artefact.Error()}
			continue
		}
		if len(c.Top) == 0 {
			return nil, llm.ErrLogprobsUnavailable
		}
		// An answer without the ids (a replica that ignored them) is a
		// top-k list, whatever was asked.
		top, byID := p.exact(c.Top[0])
		ans[c.Index] = probe.Answer{Top: top, TopK: !(askIDs && byID)}
	}
	return ans, nil
}

// promptOnce returns the prompt tokens of a read-out's K forks (prompts,
// sharing their first prefixLen bytes; total tokens as the engine counted
// them) with the shared prefix counted once, as the Probe-RPO paper's
// Table 4 counts "with cache": total - (K-1)·P, where P, the prefix's
// tokens, is what the engine's count leaves after the forks' tails, whose
// token counts are asked of the engine's tokenizer once per tail and
// kept. 0 (unknown) without a tokenizer or when a count fails.
func (p *Persuadee) promptOnce(ctx context.Context, prompts []string, prefixLen, total int) int {
	if !p.caps.Tokenize || len(prompts) == 0 {
		return 0
	}
	tails := make([]string, len(prompts))
	for k, pr := range prompts {
		tails[k] = pr[prefixLen:]
	}
	counts, ok := p.tailTokens(ctx, tails)
	if !ok {
		return 0
	}
	k := len(prompts)
	shared := total
	for _, n := range counts {
		shared -= n
	}
	if shared <= 0 {
		return 0
	}
	prefix := (shared + k/2) / k // the K prefixes' tokens, one of them
	return total - (k-1)*prefix
}

// tailTokens returns the token count of each fork tail, tokenizing those
// not yet counted (concurrently); ok is false when one fails.
func (p *Persuadee) tailTokens(ctx context.Context, tails []string) ([]int, bool) {
	counts := make([]int, len(tails))
	missing := map[string]bool{}
	p.tmu.Lock()
	for k, t := range tails {
		n, ok := p.tails[t]
		if !ok {
			missing[t] = true
		}
		counts[k] = n
	}
	p.tmu.Unlock()
	if len(missing) > 0 {
		var mu sync.Mutex
		got := map[string]int{}
		fail := false
		var wg sync.WaitGroup
		for t := range missing {
			wg.Go(func() {
				ids, err := p.eng.Tokenize(ctx, t)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fail = true
					return
				}
				got[t] = len(ids)
			})
		}
		wg.Wait()
		if fail {
			return nil, false
		}
		p.tmu.Lock()
		if p.tails == nil {
			p.tails = map[string]int{}
		}
		maps.Copy(p.tails, got)
		p.tmu.Unlock()
		for k, t := range tails {
			if n, ok := got[t]; ok {
				counts[k] = n
			}
		}
	}
	return counts, true
}

// exact relabels the candidates by token id when the engine answered by
// id: the Yes/No variants' ids as "Yes" / "No", every other candidate as
// "" (kept, unpooled, for a top-k answer's floor), so a variant reported
// both in the top-k (by string) and by id is counted once and a token
// that merely spells "yes" under another id never counts. byID reports
// that some Yes/No id was there; a list without one is returned as is
// (the engine ignored the ids, or none ranked), for probe.Pool to pool by
// spelling.
func (p *Persuadee) exact(top []probe.TokenLogprob) (out []probe.TokenLogprob, byID bool) {
	if len(p.ids) == 0 {
		return top, false
	}
	out = make([]probe.TokenLogprob, len(top))
	for i, c := range top {
		w, ok := p.ids[c.ID]
		c.Token = w // "" for any other id
		byID = byID || ok
		out[i] = c
	}
	if !byID {
		return top, false
	}
	return out, true
}
