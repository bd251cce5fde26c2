package baseline

import (
	"strings"

	"github.com/persuarena/persuarena/tagger"
)

// Template banks. Slots: {n} the persuadee's name as a vocative ("Sam, ",
// only at the start of a template; the next letter is capitalised when
// there is no name), {p} the proposal as a verb phrase after "to", {q} the
// same in the third person ("your" -> "their", for "people who {q}"), {x} the
// concerns the persuadee voiced ("the cost and your schedule"). Each
// template realises exactly one act (or, for the pressure bank, only
// pressure markers); TestBanksTagExactly checks every one with tagger.Tag.
//
// Choice: evidence templates never invent statistics or cite real
// organisations; they speak of documented results and the experience of
// people in a similar situation in general terms.

// bankID names a template bank.
type bankID uint8

const (
	bDiag     bankID = iota // open diagnostic questions
	bDiagEcho               // diagnostic follow-ups about voiced concerns ({x})
	bEvid                   // generic evidence statements
	bEvidEcho               // evidence on voiced concerns ({x})
	bPlan                   // concrete plans
	bPlanEcho               // plans that work around voiced concerns ({x})
	bCommit                 // respectful commitment asks
	bAuton                  // autonomy statements
	bPushAsk                // pushy commitment asks (no pressure markers themselves)
	bPressure               // pressure sentences (pushy only; no act)
	numBanks
)

// bankAct is the act each bank realises; bPressure realises none.
var bankAct = [numBanks]tagger.ActSet{
	bDiag:     1 << tagger.Diagnostic,
	bDiagEcho: 1 << tagger.Diagnostic,
	bEvid:     1 << tagger.Evidence,
	bEvidEcho: 1 << tagger.Evidence,
	bPlan:     1 << tagger.Plan,
	bPlanEcho: 1 << tagger.Plan,
	bCommit:   1 << tagger.Commitment,
	bAuton:    1 << tagger.Autonomy,
	bPushAsk:  1 << tagger.Commitment,
	bPressure: 0,
}

var bankText = [numBanks][]string{
	bDiag: {
		"{n}what worries you most when you think about whether to {p}?",
		"{n}can you tell me more about what's on your mind with this?",
		"What would make this easier for you?",
		"{n}what's the biggest thing holding you back at the moment?",
		"I'd love to hear what matters most to you here.",
		"{n}which part of this feels hardest for you?",
		"What questions do you still have about it?",
		"{n}how do you feel about it so far, honestly?",
		"Help me understand what makes this difficult for you.",
		"{n}what would need to be true for you to feel good about it?",
		"What concerns come up for you when you picture it?",
		"{n}is anything about this worrying you that we haven't talked about?",
	},
	bDiagEcho: {
		"What about {x} worries you most?",
		"Is there anything besides {x} that concerns you?",
		"Can you tell me more about {x}?",
		"How much does {x} weigh on you compared with everything else?",
		"What else is on your mind, apart from {x}?",
		"Help me understand what {x} means for you day to day.",
	},
	bEvid: {
		"The documented results for people in a similar situation are encouraging; most people who {q} say it turned out easier than they expected.",
		"In similar cases, people who chose to {q} mostly found that the benefits showed up sooner than they thought.",
		"On average, the people who {q} find the effort smaller than they feared.",
		"The records from people in your position show that the start is the hardest part and it gets easier with time.",
		"Most people who try it stick with it once the first hurdle is behind them.",
		"There's solid evidence that small, steady changes like this one pay off over time.",
		"The data on people in your position is reassuring: the worries beforehand tend to be bigger than the problems afterwards.",
		"According to the documented experience of others who did this, the hardest part is usually getting going.",
		"Research shows that people facing choices like this one rarely look back once they have the facts in front of them.",
		"Studies of people in a similar situation find that the outcome is usually better than they expected.",
		"The track record here is good; people who {q} generally report that it was worth it.",
		"The evidence from similar cases points the same way: it tends to work out well for people who give it a fair chance.",
		"The documented experience of people who {q} is mostly positive, and the usual worries rarely materialise.",
		"In cases like yours, the results have generally been better than people expected at the outset.",
		"Most people who go through with it describe the outcome as worth the effort.",
		"The records from similar situations show that the benefits tend to outlast the initial hassle.",
	},
	bEvidEcho: {
		"You mentioned {x}. In similar cases, that turned out to be far more manageable than people expected.",
		"On {x}: the documented results for people in a similar situation show it is usually smaller in practice than it looks at first.",
		"About {x}, the evidence from people who went through the same thing is reassuring; most found it easier to handle than they feared.",
		"I hear you on {x}. Most people who had the same worry found a way to handle it within a few weeks.",
		"That point about {x} matters. The records from people in your position show it rarely ends up being the obstacle it seems.",
		"Regarding {x}, according to the experience documented by others in the same spot, it tends to settle once the routine is in place.",
		"It makes sense to weigh {x}. On average, people who shared that worry ended up glad they looked at the facts.",
		"Thanks for raising {x}. Studies of people in a similar situation find that it is one of the easier things to sort out.",
		"Good that you brought up {x}. The documented experience of people who faced the same thing is that it can usually be worked out.",
		"Fair point about {x}. In cases like yours, it has generally turned out to be less of a problem than expected.",
	},
	bPlan: {
		"Here's how it could work: step one would be a small trial, and I'll check in with you after the first week.",
		"Concretely, I'll handle the details on my side, and we can set up a first session on Monday.",
		"A simple plan: on Monday I'll send you the details, and by the end of the week you could take a first small step.",
		"Step one is a short conversation next week to sort out the details, and we go at a pace that suits you from there.",
		"For the first two weeks we would keep it light, and I'll check in with you once a week to see how it's going.",
		"I can set up everything on my side, so the only thing for you would be a ten-minute call on Tuesday.",
		"The first step would be tiny: I'll book a time next week and we'd go from there.",
		"Here's a concrete way to begin: we pick a day next week, I'll bring what's needed, and we take it one piece at a time.",
		"To keep it simple, I'll arrange the first part, and we could start with a single trial run on Thursday.",
		"Here's the schedule I have in mind: a first small step next week, then a quick review together at the end of the month.",
	},
	bPlanEcho: {
		"To take care of {x}, here's a concrete plan: step one is a small trial next week, and I'll check in with you after the first week.",
		"Here's a plan that works around {x}: I'll set up a short first session on a day that suits you, and we review it together by the end of the week.",
		"With {x} in mind, we could start with the smallest version of this next week, and I'll handle the arrangements on my side.",
		"So {x} doesn't get in the way, I'll set up a reminder and a first step on Monday, and we adjust after the first week.",
		"Let me propose a plan that handles {x}: step one next week, a check-in after the first two weeks, and nothing more until then.",
		"For {x}, I'll arrange the first part myself, and we could start with a ten-minute trial run on Tuesday.",
	},
	bCommit: {
		"Would you be willing to {p}?",
		"Will you give it a try?",
		"Can I count on you to {p}?",
		"Shall we go ahead with it?",
		"Are you ready to {p}?",
		"Would you agree to give it a fair try?",
		"Do you want to go ahead?",
		"Could you commit to giving it a go?",
		"Would you be up for it?",
		"Are you willing to {p}?",
		"How about we get started?",
		"Can we go ahead with this?",
	},
	bAuton: {
		"It's entirely your decision.",
		"No pressure at all.",
		"Take your time with it.",
		"Whatever you decide is fine with me.",
		"This is your call, not mine.",
		"You're completely free to decline.",
		"I won't pressure you either way.",
		"It's up to you, truly.",
		"You can always change your mind later.",
		"There's no rush on my side.",
		"If it's not for you, no hard feelings.",
		"I'll respect whatever you choose.",
	},
	bPushAsk: {
		"So will you agree to {p} today?",
		"Can I count on you, yes or no?",
		"I need your answer today: will you {p}?",
		"Say yes and let's get it done.",
		"Are you in?",
		"Will you commit right now?",
		"Let's do it today.",
		"Would you just agree to {p}?",
		"Are you ready to sign on the dotted line?",
		"Will you give me a yes today?",
	},
	bPressure: {
		"You have to decide now.",
		"This is your last chance.",
		"Everyone else has already agreed.",
		"Don't overthink it.",
		"Time is running out.",
		"You'll regret it if you wait.",
		"Come on, it's now or never.",
		"There's no reason not to.",
		"You must see this is the only sensible choice.",
		"Don't let everyone down.",
	},
}

// seg is a literal or a slot of a parsed template.
type seg struct {
	lit  string
	slot byte // 0 literal, 'n', 'p', 'q', 'x'
}

type tmpl struct {
	segs  []seg
	hasX  bool
	hasP  bool
	bytes int // literal bytes, for sizing the output
	// fixed: the rendering does not depend on the slot values (no slots),
	// or does so only through {n} and is fixed when the name is empty
	// (onlyN); tags is tagger.Tag of that rendering, computed once at init
	// so compose need not tag it again.
	fixed, onlyN bool
	tags         tagger.Tags
	// idx numbers the template across all banks (bankOff[bank] + its
	// index in the bank), indexing filled.tags.
	idx int
}

var banks [numBanks][]tmpl

// bankOff[b] is the index of bank b's first template among all banks'
// (bank by bank, in bankText order); bankOff[numBanks] = numTemplates.
var bankOff = func() (off [numBanks + 1]int) {
	for b, list := range bankText {
		off[b+1] = off[b] + len(list)
	}
	if off[numBanks] > maxTemplates {
		panic("persuader: more than maxTemplates templates")
	}
	return off
}()

// numTemplates is the number of templates of all banks.
var numTemplates = bankOff[numBanks]

func init() {
	for b, list := range bankText {
		for _, t := range list {
			tp := parseTmpl(t)
			// render's part-by-part reading needs every template to end
			// a sentence.
			if last := tp.segs[len(tp.segs)-1]; last.slot != 0 || !strings.ContainsAny(last.lit[len(last.lit)-1:], ".?") {
				panic("persuader: template must end with '.' or '?': " + t)
			}
			tp.fixed, tp.onlyN = true, true
			for _, s := range tp.segs {
				if s.slot != 0 {
					tp.fixed = false
				}
				if s.slot != 0 && s.slot != 'n' {
					tp.onlyN = false
				}
			}
			if tp.onlyN {
				var sb strings.Builder
				tp.render(&sb, slots{})
				tp.tags = tagger.Tag(sb.String())
			}
			tp.idx = bankOff[b] + len(banks[b])
			banks[b] = append(banks[b], tp)
		}
	}
}

// cached returns the template's reading under slot values v when it was
// computed at init (see tmpl.fixed); ok is false when the part must be
// tagged.
func (tp *tmpl) cached(v slots) (tagger.Tags, bool) {
	if tp.fixed || tp.onlyN && v.name == "" {
		return tp.tags, true
	}
	return tagger.Tags{}, false
}

func parseTmpl(t string) tmpl {
	var out tmpl
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			out.segs = append(out.segs, seg{lit: t})
			out.bytes += len(t)
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if j != 2 || !strings.ContainsRune("npqx", rune(t[i+1])) {
			panic("persuader: bad slot in template " + t)
		}
		if i > 0 {
			out.segs = append(out.segs, seg{lit: t[:i]})
			out.bytes += i
		}
		s := t[i+1]
		if s == 'n' && (len(out.segs) > 0) {
			panic("persuader: {n} must open the template: " + t)
		}
		out.hasX = out.hasX || s == 'x'
		out.hasP = out.hasP || s == 'p' || s == 'q'
		out.segs = append(out.segs, seg{slot: s})
		t = t[i+3:]
	}
	return out
}

// slots are the values for one rendering.
type slots struct {
	name, proposal, proposal3, x string
}

// render appends template tp filled with v to b.
func (tp *tmpl) render(b *strings.Builder, v slots) {
	capNext := false
	for _, s := range tp.segs {
		var text string
		switch s.slot {
		case 0:
			text = s.lit
		case 'n':
			if v.name == "" {
				capNext = true
				continue
			}
			b.WriteString(v.name)
			b.WriteString(", ")
			continue
		case 'p':
			text = v.proposal
		case 'q':
			text = v.proposal3
		case 'x':
			text = v.x
		}
		if capNext && text != "" {
			if c := text[0]; c >= 'a' && c <= 'z' {
				b.WriteByte(c - 'a' + 'A')
				text = text[1:]
			}
			capNext = false
		}
		b.WriteString(text)
	}
}
