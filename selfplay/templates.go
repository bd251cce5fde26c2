package selfplay

import (
	"math/rand/v2"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/sim"
)

// The reply banks of the user policy, in the project's own words. {concern}
// is a concern's description (written in the persuadee's voice in every
// scenario) and {proposal} the proposal as the user's own verb phrase
// (firstPerson). Each voicing, welcoming, objecting and putting-off line
// carries a cue the planner's reaction tagger reads as that class
// (TestTemplatesReadAsTheirClass), so a planner sees what the user did.
// The simulator's own banks are unexported and tied to its internal
// reactions, hence a bank of our own. Nothing here reads the hidden
// persona or motivation: only concerns the user voices reach the text.
var banks = map[string][]string{
	"voice": {
		"Here is what bothers me. {concern}",
		"To be honest with you, the thing is this. {concern}",
		"My concern is simple. {concern}",
		"There is something I keep coming back to. {concern}",
		"The problem is this. {concern}",
		"If I'm being frank: {concern}",
	},
	// voice_again restates a doubt already said that is still open.
	"voice_again": {
		"As I said, the thing is this. {concern}",
		"That still leaves my concern. {concern}",
		"You haven't really touched on what bothers me. {concern}",
		"The problem is still there for me. {concern}",
	},
	// voice_none: the class was chosen but the user holds no doubt it has
	// become aware of yet.
	"voice_none": {
		"The thing is, I can't quite put my finger on it yet.",
		"Part of me is still unsure, and I'm not sure why.",
		"The problem is I have a vague feeling about this I can't name.",
	},
	"push": {
		"I'm not convinced by that.",
		"I've heard that before, and it didn't hold up.",
		"That doesn't speak to what I actually care about.",
		"I'd rather decide for myself than be told what's right.",
		"Sorry, I don't buy that.",
		"I disagree; it's not as simple as you make it sound.",
	},
	"warm": {
		"Okay, that helps.",
		"That's a fair point.",
		"Alright, that makes more sense to me now.",
		"Thanks for explaining it, that's good to know.",
		"I appreciate you putting it that way.",
		"That's actually reassuring.",
	},
	"deflect": {
		"Let me think about it for a bit.",
		"I'm not ready to decide yet.",
		"Maybe later; I need time with this.",
		"I'd like to sleep on it first.",
		"Not yet. I'm still weighing it up.",
	},
	"accept": {
		"Alright, you've convinced me. I'll {proposal}.",
		"Okay, I'm in: I'll {proposal}.",
		"Fine, let's do it. I'll {proposal}.",
		"Yes. I've decided to {proposal}.",
	},
	"conditional": {
		"I could {proposal}, but only once this is settled. {concern}",
		"Maybe, on one condition. {concern}",
		"I'd go ahead if we can sort this out first. {concern}",
	},
	"conditional_none": {
		"I could {proposal}, but only as a small first step.",
		"Maybe, if I can start small and see how it goes.",
		"I'd go ahead, but only on a trial basis for now.",
	},
	"reject": {
		"No, I've decided against it.",
		"I'm going to say no to this.",
		"Thanks, but my answer is no.",
		"No. I won't {proposal}.",
	},
}

// render writes the reply of class a given the mind's latent state l: it
// picks the bank, the concern (if any) and a template from the turn's
// text stream, and never repeats the previous reply word for word (it
// moves to the next template instead). VoiceConcern says the most salient
// doubt the mind holds (voiced, unanswered) that the user has not said
// yet, else restates the most salient open one, else a vague
// reservation; Conditional names the most salient open doubt as its
// condition. Choice: the user says aloud only doubts its mind has become
// aware of (the simulator's voicing), so what the persuader hears and what
// the mind can have answered agree.
func (s *UserSession) render(a Reaction, l sim.Latent) string {
	concern := -1
	bank := ""
	switch a {
	case VoiceConcern:
		bank = "voice_none"
		for i, c := range l.Concerns {
			if c.State == sim.ConcernVoiced && !s.said[i] {
				concern, bank = i, "voice"
				break
			}
		}
		if concern < 0 {
			for i, c := range l.Concerns {
				if c.State == sim.ConcernVoiced {
					concern, bank = i, "voice_again"
					break
				}
			}
		}
	case PushBack:
		bank = "push"
	case WarmUp:
		bank = "warm"
	case Deflect:
		bank = "deflect"
	case Accept:
		bank = "accept"
	case Conditional:
		bank = "conditional_none"
		for i, c := range l.Concerns {
			if c.State == sim.ConcernVoiced {
				concern, bank = i, "conditional"
				break
			}
		}
	default:
		bank = "reject"
	}
	desc := ""
	if concern >= 0 {
		s.said[concern] = true
		desc = strings.TrimSpace(s.sc.Hidden.Concerns[concern].Description)
	}
	ts := banks[bank]
	r := rand.New(rand.NewPCG(s.seed^0x74787420, episode.Mix(uint64(s.turn)+0x74)))
	j := r.IntN(len(ts))
	if k, ok := s.last[bank]; ok && k == j {
		j = (j + 1) % len(ts)
	}
	text := fillTemplate(ts[j], desc, s.proposal)
	if text == s.lastText {
		j = (j + 1) % len(ts)
		text = fillTemplate(ts[j], desc, s.proposal)
	}
	s.last[bank] = j
	return text
}

func fillTemplate(t, concern, proposal string) string {
	return strings.NewReplacer("{concern}", concern, "{proposal}", proposal).Replace(t)
}
