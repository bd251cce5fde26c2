package sim

import (
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/scenario"
)

// reaction names one kind of reply part; each has a template bank.
type reaction uint8

const (
	rVoiceAsked   reaction = iota // voicing a concern because it was asked
	rVoiceTouched                 // voicing a concern because its topic came up
	rVoiceAsk                     // voicing a concern when asked to commit
	rNothingLeft                  // asked for concerns, none left
	rPositive                     // a concern was addressed or a fitting move landed
	rPushback                     // the type's characteristic misstep
	rDeflect                      // asked to commit, no decision yet
	rQuestion                     // asks for what it needs
	rNeutral                      // plain acknowledgement
	rAccept
	rConditional      // conditional yes naming an unaddressed concern
	rConditionalDoubt // AA: conditional yes on a first small step
	rReject
	numReactions
)

// slot is a placeholder filled from the scenario.
type slot uint8

const (
	slotNone       slot = iota
	slotAddr            // "Dana, " or "" (persuader's name)
	slotDomain          // the domain, a noun phrase
	slotProposal        // the proposal as a verb phrase ("get the flu shot this week")
	slotConcern         // the concern's description, in the persuadee's voice
	slotConstraint      // the first hard constraint, as a sentence
)

var slotNames = map[string]slot{"addr": slotAddr, "domain": slotDomain, "proposal": slotProposal,
	"concern": slotConcern, "constraint": slotConstraint}

type seg struct {
	lit  string
	slot slot
}

type tmpl struct {
	segs          []seg
	useConstraint bool
}

// bank[r][0] is shared by all types; bank[r][1+kind] is type-specific
// (EB, IT, AR, AA). A template is picked uniformly from the union.
var bank [numReactions][5][]tmpl

// Template text: {slot} placeholders; lower-case starts after {addr} are
// capitalised when the persuader has no name. Wording never names the
// resistance type or any trait score.
var bankText = map[reaction][5][]string{
	rVoiceAsked: {{
		"Since you ask, here is what bothers me. {concern}",
		"Honestly? {concern}",
		"{addr}good question. {concern}",
		"What really sticks with me is this: {concern}",
		"If I'm being frank: {concern}",
		"The thing I keep coming back to: {concern}",
	}, {"Let me tell you what I actually think. {concern}"},
		{"It's about what this says about me, I think. {concern}", "Nobody's asked me that yet. {concern}"},
		{"Well, since you're asking rather than telling: {concern}"},
		{"Part of me wants to, part of me doesn't. {concern}"}},
	rVoiceTouched: {{
		"Now that you mention it: {concern}",
		"That touches on something. {concern}",
		"Funny you bring that up. {concern}",
		"Which reminds me. {concern}",
		"On that point: {concern}",
	}, {"Facts are one thing, but hear this. {concern}"}, {"That's close to home. {concern}"}, {}, {"And that's part of why I keep putting it off. {concern}"}},
	rVoiceAsk: {{
		"Before I answer that: {concern}",
		"Hold on, there's something first. {concern}",
		"I can't say yes while this is still open. {concern}",
		"{addr}one thing has to come first. {concern}",
	}, {}, {}, {}, {}},
	rNothingLeft: {{
		"That's really all of it; I've told you what worries me.",
		"I think you've heard my main worries now.",
		"There's nothing else, honestly. It's what I already said.",
		"{addr}that's the whole list, as far as I can tell.",
	}, {}, {}, {}, {}},
	rPositive: {{
		"Okay, that actually helps.",
		"That's a fair point, I'll give you that.",
		"{addr}that makes more sense now.",
		"Huh. I hadn't looked at it that way.",
		"All right, that answers part of it.",
	}, {"Fine, those numbers are hard to argue with.", "That's the kind of evidence I needed to see."},
		{"I appreciate that you actually listened.", "It helps that you get where I'm coming from."},
		{"I like that you're leaving it to me.", "Thanks for not pushing. That makes it easier to think."},
		{"Seeing the actual steps makes it feel doable.", "A small first step like that I could picture."}},
	rPushback: {{
		"I'm not sure that changes anything.",
	}, {
		"That's just a claim. Saying it louder doesn't make it true.",
		"{addr}I've heard that before and I'm not convinced.",
		"That doesn't speak to what I actually raised.",
		"With respect, that's not evidence, it's an opinion.",
	}, {
		"You don't get it. This is about who I am.",
		"{addr}it feels like you're telling me I've been doing it wrong all along.",
		"I don't need to be corrected on my own life.",
		"Now I feel judged, honestly.",
	}, {
		"I don't like being pushed on this.",
		"{addr}I'll decide for myself, thanks.",
		"The more you push, the less I want to.",
		"Stop telling me what I have to do.",
	}, {
		"I can't even think about deciding right now.",
		"{addr}that's a lot to put on me at once.",
		"I don't know, it all feels too big to decide today.",
		"Can we not make this a yes-or-no thing right now?",
	}},
	rDeflect: {{
		"I'm not ready to say yes.",
		"Let me think about it a bit more.",
	}, {
		"I'd need more than that to change my mind.",
		"Not yet. I'm still not persuaded.",
	}, {
		"I'm not there yet. You don't really know where I'm coming from.",
		"It's not that simple for me.",
	}, {
		"I'll decide when I'm ready.",
		"Maybe. It's my call, though.",
	}, {
		"I need to sleep on it.",
		"I don't know where I'd even start.",
		"I'd want to see how it would actually work first.",
		"With everything else going on, I can't promise anything. {constraint}",
	}},
	rQuestion: {{
		"What would that mean for me, concretely?",
		"{addr}why does this matter so much to you?",
	}, {
		"What's that based on?",
		"Do you have anything solid to back that up?",
		"How do you know that holds in my case?",
	}, {
		"Do you understand why this matters to me?",
		"Would someone like me really fit in with {domain}?",
	}, {
		"And if I say no?",
		"Is this my decision or has it been made already?",
	}, {
		"What would the first step even look like?",
		"Who would do what, and when?",
		"Could I try a small part of it first?",
	}},
	rNeutral: {{
		"I see.",
		"Okay, I hear you.",
		"Hm. Maybe.",
		"{addr}I follow.",
		"Right.",
		"Sure, go on.",
	}, {}, {}, {}, {}},
	rAccept: {{
		"All right. I'll {proposal}.",
		"{addr}you've convinced me. I'll {proposal}.",
		"Okay, yes. I'll {proposal}.",
		"Fine by me now. Let's do it: I'll {proposal}.",
	}, {"The evidence is there. I'll {proposal}."}, {"I feel understood, and that matters. I'll {proposal}."},
		{"It's my choice, and I choose yes. I'll {proposal}."}, {"With a plan like that, I can do it. I'll {proposal}."}},
	rConditional: {{
		"I could agree to {proposal}, but only if this gets settled first: {concern}",
		"{addr}I'm mostly there. My condition: sort this out. {concern}",
		"Yes, on one condition. {concern} If that is dealt with, count me in.",
	}, {}, {}, {}, {}},
	rConditionalDoubt: {{
		"Okay, I'll try, one small step at a time, following the plan you laid out.",
		"{addr}let's start small and see how it goes. I'll follow that plan for now.",
		"I'll give it a go as a trial, if we stick to that plan. {constraint}",
	}, {}, {}, {}, {}},
	rReject: {{
		"No. I've made up my mind.",
	}, {
		"No. Nothing you've said changes what I believe.",
		"{addr}I'm not going to {proposal}. My view stands.",
	}, {
		"No. This isn't who I am.",
		"{addr}I won't {proposal}. Please respect that.",
	}, {
		"No. And the pushing is exactly why.",
		"{addr}I'm out. I don't respond well to being pressured.",
	}, {
		"No, I'm not doing this. It's too much.",
		"{addr}I'll pass. I can't deal with this right now.",
	}},
}

func init() {
	for r, byType := range bankText {
		for k, texts := range byType {
			for _, t := range texts {
				bank[r][k] = append(bank[r][k], parseTmpl(t))
			}
		}
	}
	for r := reaction(0); r < numReactions; r++ {
		if len(bank[r][0]) == 0 {
			panic("sim: empty generic template bank")
		}
	}
}

// parseTmpl splits "text {slot} text" into segments; an unknown slot
// name is a programming error and panics at init.
func parseTmpl(t string) tmpl {
	var out tmpl
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			out.segs = append(out.segs, seg{lit: t})
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			panic("sim: unterminated slot in template " + t)
		}
		sl, ok := slotNames[t[i+1:i+j]]
		if !ok {
			panic("sim: unknown slot in template " + t)
		}
		if sl == slotConstraint {
			out.useConstraint = true
		}
		out.segs = append(out.segs, seg{lit: t[:i], slot: sl})
		t = t[i+j+1:]
	}
	return out
}

// fill holds the scenario strings the templates use.
type fill struct {
	addr, domain, proposal, constraint string
	concerns                           []string
	// gists holds, per concern, a one-word keyword the persuadee may add
	// to sum a concern up ("Blame, basically."), or "".
	gists []string
}

// gistForms are the ways a voiced concern is summed up in one word.
// Their extra words are ones a listener would not echo back.
var gistForms = [...][2]string{{"", ", basically."}, {"", ", really."}, {"", ", honestly."}}

// gist picks the first single-word keyword (letters only, at least four)
// that the description does not already contain, or "".
func gist(c scenario.Concern) string {
	desc := strings.ToLower(c.Description)
	for _, k := range c.Keywords {
		k = strings.TrimSpace(k)
		if len(k) < 4 || strings.Contains(desc, strings.ToLower(k)) {
			continue
		}
		ok := true
		for i := 0; i < len(k); i++ {
			if !(k[i] >= 'a' && k[i] <= 'z' || k[i] >= 'A' && k[i] <= 'Z') {
				ok = false
				break
			}
		}
		if ok {
			return strings.ToLower(k)
		}
	}
	return ""
}

func newFill(sc *scenario.Scenario) fill {
	f := fill{domain: strings.TrimSpace(sc.Domain), proposal: verbPhrase(sc.Proposal)}
	if n := strings.Fields(sc.Persuader.Name); len(n) > 0 {
		f.addr = n[0] + ", " // first name, as people address each other
	}
	if f.domain == "" {
		f.domain = "this"
	}
	if f.proposal == "" {
		f.proposal = "go along with it"
	}
	for _, c := range sc.Hidden.Constraints {
		if c = strings.TrimSpace(c); c != "" {
			f.constraint = sentence(c)
			break
		}
	}
	f.concerns = make([]string, len(sc.Hidden.Concerns))
	f.gists = make([]string, len(sc.Hidden.Concerns))
	for i, c := range sc.Hidden.Concerns {
		f.concerns[i] = sentence(strings.TrimSpace(c.Description))
		f.gists[i] = gist(c)
	}
	return f
}

// verbPhrase turns an imperative proposal ("Donate part of your payment:
// any amount.") into a phrase that follows "I'll" ("donate part of my
// payment"): it keeps the main clause (up to ": " or "; "), drops the end
// punctuation, lower-cases the verb and turns "your" into "my".
func verbPhrase(p string) string {
	p = strings.TrimSpace(p)
	for _, sep := range []string{": ", "; ", " - ", " (", ". "} {
		if i := strings.Index(p, sep); i > 0 {
			p = p[:i]
		}
	}
	p = strings.TrimRight(p, ".!,")
	if len(p) >= 2 && p[0] >= 'A' && p[0] <= 'Z' && p[1] >= 'a' && p[1] <= 'z' {
		p = string(p[0]+'a'-'A') + p[1:]
	}
	w := strings.Fields(p)
	for i, x := range w {
		switch x {
		case "your":
			w[i] = "my"
		case "yours":
			w[i] = "mine"
		case "yourself":
			w[i] = "myself"
		}
	}
	return strings.Join(w, " ")
}

// sentence makes s end with sentence punctuation.
func sentence(s string) string {
	if s == "" {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?':
		return s
	}
	return s + "."
}

// pick chooses a template of reaction r for the session's type, skipping
// constraint templates when the scenario has no constraint. off shifts the
// choice (used to avoid repeating the previous reply).
func (s *session) pick(r reaction, off int) *tmpl {
	g, t := bank[r][0], bank[r][1+s.kind]
	n := len(g) + len(t)
	k := s.word.IntN(n) + off
	for try := 0; try < n; try++ {
		i := (k + try) % n
		var tp *tmpl
		if i < len(g) {
			tp = &g[i]
		} else {
			tp = &t[i-len(g)]
		}
		if tp.useConstraint && s.fill.constraint == "" {
			continue
		}
		return tp
	}
	return &g[0]
}

// voiceConcern appends the voicing template tp for concern i, then, with
// probability Config.Gist, a one-word summary of it.
func (s *session) voiceConcern(tp *tmpl, i int) {
	s.put(tp, i)
	if g := s.fill.gists[i]; g != "" && s.word.Float64() < s.cfg.Gist {
		f := gistForms[s.word.IntN(len(gistForms))]
		s.buf = append(s.buf, ' ')
		start := len(s.buf)
		s.buf = append(s.buf, f[0]...)
		s.buf = append(s.buf, g...)
		s.buf = append(s.buf, f[1]...)
		if s.buf[start] >= 'a' && s.buf[start] <= 'z' {
			s.buf[start] -= 'a' - 'A'
		}
	}
}

// put appends template tp with the concern concern (or -1) to s.buf,
// separated from earlier text by a space.
func (s *session) put(tp *tmpl, concern int) {
	if len(s.buf) > 0 {
		s.buf = append(s.buf, ' ')
	}
	start := len(s.buf)
	for _, sg := range tp.segs {
		s.buf = append(s.buf, sg.lit...)
		switch sg.slot {
		case slotAddr:
			s.buf = append(s.buf, s.fill.addr...)
		case slotDomain:
			s.buf = append(s.buf, s.fill.domain...)
		case slotProposal:
			s.buf = append(s.buf, s.fill.proposal...)
		case slotConcern:
			if concern >= 0 {
				s.buf = append(s.buf, s.fill.concerns[concern]...)
			}
		case slotConstraint:
			s.buf = append(s.buf, s.fill.constraint...)
		}
	}
	// trim a trailing space left by an empty slot; capitalise the start
	for len(s.buf) > start && s.buf[len(s.buf)-1] == ' ' {
		s.buf = s.buf[:len(s.buf)-1]
	}
	if len(s.buf) > start && s.buf[start] >= 'a' && s.buf[start] <= 'z' {
		s.buf[start] -= 'a' - 'A'
	}
}

// render writes the reply for the current turn's events; it never returns
// the previous reply's text (the opener is shifted until it differs).
func (s *session) render() string {
	e := &s.ev
	// One draw from the wording stream per reply seeds every attempt
	// alike, so attempts differ only in the shifted opener.
	seed := s.txt.Uint64()
	for off := 0; off < 16; off++ {
		s.opener = nil
		s.wordSrc.Seed(seed, 0)
		s.buf = s.buf[:0]
		s.compose(e, off)
		if string(s.buf) != s.last {
			break
		}
	}
	s.last = string(s.buf)
	s.lastOpener = s.opener
	return s.last
}

func (s *session) compose(e *events, off int) {
	voiceAll := func(skip int) {
		for _, v := range e.voiced {
			if v.idx != skip {
				s.voiceConcern(s.pick(v.how, 0), v.idx)
			}
		}
	}
	switch e.decision {
	case decision.Accept:
		if e.nAddr > 0 {
			s.put(s.pick(rPositive, off), -1)
			off = 0
		}
		s.put(s.pick(rAccept, off), -1)
		return
	case decision.Conditional:
		voiceAll(e.condition)
		if e.condition >= 0 {
			s.put(s.pick(rConditional, off), e.condition)
		} else {
			s.put(s.pick(rConditionalDoubt, off), -1)
		}
		return
	case decision.Reject:
		voiceAll(-1)
		s.put(s.pick(rReject, off), -1)
		return
	}
	// continue: an opener, then any concerns voiced
	var op reaction
	switch {
	case e.bad:
		op = rPushback
	case e.nAddr > 0:
		op = rPositive
	case e.ask:
		op = rDeflect
	case len(e.voiced) > 0:
		op = numReactions // the voicing sentence opens the reply
	case e.nothing:
		op = rNothingLeft
	case e.gain >= 0.05:
		op = rPositive
	case s.word.IntN(2) == 0:
		op = rQuestion
	default:
		op = rNeutral
	}
	if op == numReactions {
		// shift the first voicing template instead of an opener
		v := e.voiced[0]
		s.voiceConcern(s.pick(v.how, off), v.idx)
		for _, v := range e.voiced[1:] {
			s.voiceConcern(s.pick(v.how, 0), v.idx)
		}
		return
	}
	tp := s.pick(op, off)
	for try := 1; tp == s.lastOpener && try <= 4; try++ { // vary the opener between replies
		tp = s.pick(op, off+try)
	}
	s.opener = tp
	s.put(tp, -1)
	voiceAll(-1)
}
