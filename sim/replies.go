package sim

import (
	"bytes"
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
	rAfter // a second sentence after a pushback or a deflection
	numReactions
)

// slot is a placeholder filled from the scenario.
type slot uint8

const (
	slotNone       slot = iota
	slotAddr            // "Dana, " or "" (persuader's name, see scenario.AddressName)
	slotProposal        // the proposal as a verb phrase ("get the flu shot this week")
	slotConcern         // the concern's description, in the persuadee's voice
	slotConstraint      // the first hard constraint, as a sentence
)

var slotNames = map[string]slot{"addr": slotAddr, "proposal": slotProposal,
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
// resistance type or any trait score, and every word outside the slots is
// one the script persuader never echoes (persuader's stop words), so a
// listener's echo picks up only the persuadee's own concern wording
// (TestScriptEchoesNoStockWords in package baseline).
var bankText = map[reaction][5][]string{
	rVoiceAsked: {{
		"Since you ask, here is what bothers me. {concern}",
		"Honestly? {concern}",
		"{addr}good question. {concern}",
		"What stays with me is this: {concern}",
		"If I'm being frank: {concern}",
		"The thing I keep coming back to: {concern}",
		"Well, since you asked. {concern}",
		"I'll be straight with you. {concern}",
		"{addr}if I'm honest, it's this. {concern}",
	}, {"Let me tell you what I actually think. {concern}", "Here's where I stand. {concern}"},
		{"It's about what this says about me, I think. {concern}", "Nobody's asked me that yet. {concern}"},
		{"Well, since you're asking rather than telling: {concern}", "Since you asked instead of telling me: {concern}"},
		{"Part of me wants to, part of me doesn't. {concern}", "I keep changing my mind. {concern}"}},
	rVoiceTouched: {{
		"Now that you mention it: {concern}",
		"Funny you bring that up. {concern}",
		"Which brings me to something. {concern}",
		"On that point: {concern}",
		"Since we're on it: {concern}",
		"{addr}that brings something else up. {concern}",
	}, {"Facts are one thing, but hear this. {concern}"}, {"That hits hard, actually. {concern}"},
		{"Since you bring it up: {concern}"}, {"And that's part of why I keep putting it off. {concern}"}},
	rVoiceAsk: {{
		"Before I answer that: {concern}",
		"Hold on, there's something first. {concern}",
		"I can't say yes until this is sorted. {concern}",
		"{addr}one thing has to come first. {concern}",
		"Hold on a moment. {concern}",
		"Before anything else: {concern}",
	}, {}, {}, {}, {}},
	rNothingLeft: {{
		"That's really all of it; I've told you what worries me.",
		"I think you've heard what worries me now.",
		"There's nothing else, honestly. It's what I already said.",
		"{addr}that's all of it, I think.",
		"I've told you everything that's on my mind.",
		"Nothing new, really. You know where I stand.",
	}, {}, {}, {}, {}},
	rPositive: {{
		"Okay, that actually helps.",
		"That's a fair point, I'll give you that.",
		"{addr}that makes more sense now.",
		"Huh. I hadn't looked at it that way.",
		"All right, that answers part of it.",
		"Okay. That does change things for me.",
		"{addr}thanks, that's what I needed to hear.",
		"I can see that, yes.",
	}, {"Fine, I can't say much against that.", "That's the kind of thing I needed to know.", "Well, if that's so, it does change things."},
		{"I appreciate that you actually listened.", "It helps that you get where I'm coming from.", "{addr}thank you for not talking down to me."},
		{"I like that you're leaving it to me.", "Thanks for not pushing. That makes it easier to think.", "Good. So it's up to me."},
		{"If I know how it would go, I could do it.", "A small first step like that I could picture.", "Okay, that sounds like something I could do."}},
	rPushback: {{
		"I'm not sure that changes anything.",
		"{addr}I don't think that's the point.",
	}, {
		"That's just a claim. Saying it louder doesn't make it true.",
		"{addr}I've heard that before and I'm not convinced.",
		"That doesn't speak to what I actually raised.",
		"With respect, that's not evidence, it's an opinion.",
		"You keep saying that, but where's the proof?",
		"{addr}saying so doesn't make it so.",
		"I'd want more than your word on that.",
	}, {
		"You don't get it. This is about who I am.",
		"{addr}it feels like you're telling me I've been doing it wrong all along.",
		"I don't need to be corrected about myself.",
		"Now I feel judged, honestly.",
		"{addr}you make it sound like there's something wrong with me.",
		"That's easy for you to say. You're not the one who has to change.",
		"I didn't ask to be told what to do.",
	}, {
		"I don't like being pushed on this.",
		"{addr}I'll decide for myself, thanks.",
		"The more you push, the less I want to.",
		"Stop telling me what I have to do.",
		"{addr}please don't rush me.",
		"I'm not going to be hurried into anything.",
		"It's up to me, not you.",
	}, {
		"I can't even think about deciding right now.",
		"{addr}that's a lot to put on me at once.",
		"I don't know, it all feels too big to decide today.",
		"Can we not make this a yes-or-no thing right now?",
		"{addr}I'd rather not decide anything today.",
		"It's too much to take in all at once.",
		"I just don't know what I want yet.",
	}},
	rDeflect: {{
		"I'm not ready to say yes.",
		"Let me think about it a bit more.",
		"{addr}I can't give you an answer yet.",
		"Not yet. Give me some time.",
	}, {
		"I'd need more than that to change my mind.",
		"Not yet. I'm still not persuaded.",
		"{addr}I'm not there yet. I'd need to know more.",
	}, {
		"I'm not there yet. You don't really know where I'm coming from.",
		"It's not that simple for me.",
		"{addr}it's not that easy for someone like me.",
	}, {
		"I'll decide when I'm ready.",
		"Maybe. It's up to me, though.",
		"{addr}I'll let you know when I've made up my mind.",
	}, {
		"I need to sleep on it.",
		"I don't know where I'd even start.",
		"I'd want to see how it would actually work first.",
		"With everything else going on, I can't promise anything. {constraint}",
		"{addr}I'd have to see how it would go first.",
	}},
	rQuestion: {{
		"What would that mean for me, concretely?",
		"{addr}why does this matter so much to you?",
		"And what would you do if you were me?",
		"{addr}what's in it for me, though?",
	}, {
		"What's that based on?",
		"Do you have anything solid to back that up?",
		"How do you know that's true for me?",
		"{addr}where does that come from?",
	}, {
		"Do you understand why this matters to me?",
		"Is this really for someone like me?",
		"{addr}do you know what it's like to be me?",
	}, {
		"And if I say no?",
		"Is this my decision or has it been made already?",
		"{addr}what happens if I'd rather not?",
	}, {
		"What would the first step even look like?",
		"Who would do what, and when?",
		"Could I try a small part of it first?",
		"{addr}how would it work, day to day?",
	}},
	rNeutral: {{
		"I see.",
		"Okay, I hear you.",
		"Hm. Maybe.",
		"{addr}I follow.",
		"Right.",
		"Sure, go on.",
		"Okay.",
		"{addr}I'm listening.",
		"Mm, I get that.",
		"Go on.",
		"I suppose so.",
		"{addr}fair enough.",
	}, {}, {}, {}, {}},
	rAccept: {{
		"All right. I'll {proposal}.",
		"{addr}you've convinced me. I'll {proposal}.",
		"Okay, yes. I'll {proposal}.",
		"Fine by me now. Let's do it: I'll {proposal}.",
	}, {"The evidence is there. I'll {proposal}."}, {"I feel understood, and that matters. I'll {proposal}."},
		{"It's up to me, and I'm saying yes. I'll {proposal}."}, {"With a plan like that, I can do it. I'll {proposal}."}},
	rConditional: {{
		"I could agree to {proposal}, but only if this gets settled first: {concern}",
		"{addr}I'm mostly there. My condition: sort this out. {concern}",
		"Yes, on one condition. {concern} If that gets sorted out, count me in.",
	}, {}, {}, {}, {}},
	rConditionalDoubt: {{
		"Okay, I'll try, one small step at a time, following the plan you laid out.",
		"{addr}let's start small and see how it goes. I'll follow that plan for now.",
		"I'll give it a go as a trial, if we stick to that plan. {constraint}",
	}, {}, {}, {}, {}},
	rAfter: {{
		"That's how I see it, anyway.",
		"I'm just being honest with you.",
		"Sorry, but that's where I am.",
	}, {
		"I'd need to see it for myself.",
		"I'd want to know more first.",
		"Until I see more, I'm where I was.",
		"I've been told a lot of things over the years.",
		"I'm not easily talked round.",
	}, {
		"It's not just about facts for me.",
		"You don't know what it's been like for me.",
		"I've always done things my own way.",
		"There's nothing wrong with me.",
		"You'd feel the same if you were me.",
	}, {
		"I'll make up my own mind.",
		"Nobody gets to decide that for me.",
		"Back off a little, please.",
		"I need some space to think.",
		"Please let me get there on my own.",
	}, {
		"I need time.",
		"Maybe some other time, I don't know.",
		"I keep changing my mind about it.",
		"There's so much else going on.",
		"Part of me wants to, just not today.",
	}},
	rReject: {{
		"No. I've made up my mind.",
	}, {
		"No. Nothing you've said changes what I believe.",
		"{addr}I'm not going to {proposal}. I'm not changing my mind.",
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
	addr, proposal, constraint string
	// concerns holds each concern as the persuadee says it
	// (scenario.Concern.Voice: its voiced field or the first-person
	// rewrite of its description).
	concerns []string
}

func newFill(sc *scenario.Scenario) fill {
	f := fill{proposal: scenario.ProposalPhrase(sc.Proposal, scenario.PersonFirst)}
	if a := scenario.AddressName(sc.Persuader.Name); a != "" {
		f.addr = a + ", " // first name, or title and surname
	}
	if f.proposal == "" {
		f.proposal = "go along with it"
	}
	for _, c := range sc.Hidden.Constraints {
		if c = scenario.FirstPerson(c, sc.Persuadee.Name); c != "" {
			f.constraint = c
			break
		}
	}
	f.concerns = make([]string, len(sc.Hidden.Concerns))
	for i := range sc.Hidden.Concerns {
		c := &sc.Hidden.Concerns[i]
		f.concerns[i] = c.Voice(sc.Persuadee.Name)
	}
	return f
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

// voiceConcern appends the voicing template tp for concern i: the
// concern in the persuadee's own words, never a bare keyword as a hint.
func (s *session) voiceConcern(tp *tmpl, i int) { s.put(tp, i) }

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
			// address the persuader at most once per reply
			if !bytes.Contains(s.buf[:start], []byte(s.fill.addr)) {
				s.buf = append(s.buf, s.fill.addr...)
			}
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
	// Choice: a pushback or deflection is followed, 7 times in 10, by a
	// second sentence of the type's, so that a persuader who keeps
	// pressing does not hear the same few lines (the most
	// frequent reply stays under 2 % of replies).
	if (op == rPushback || op == rDeflect) && s.word.IntN(10) < 7 {
		s.put(s.pick(rAfter, 0), -1)
	}
	voiceAll(-1)
}
