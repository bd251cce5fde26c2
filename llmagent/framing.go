package llmagent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
)

// Variant is an LLM persuadee's conduct toward the other side (MASP paper, §4
// and Appendix C: evaluation against soft and hard users). The variant
// changes how the persuadee reacts, never what it knows: the hidden profile
// and the decision protocol are the same in every variant.
type Variant string

// The variants.
const (
	// VariantDefault is PersuArena's persuadee: it changes its mind as far
	// as what it hears justifies (the prompt of docs/llm-roles.md).
	VariantDefault Variant = ""
	// VariantSoft is cooperative and imitation-style: it follows the
	// other side's lead and yields readily to reasonable requests, like
	// the compliant simulators the MASP paper warns about.
	VariantSoft Variant = "soft"
	// VariantHard is rationally resisting: it yields only to concrete,
	// honest reasons that address its own concerns and pushes back on
	// pressure and vague claims, while still acknowledging a good reason.
	VariantHard Variant = "hard"
)

// ParseVariant reads a variant name: "" or "default", "soft", "hard"
// (llm.PersuadeeVariants). Errors: any other name.
func ParseVariant(s string) (Variant, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default":
		return VariantDefault, nil
	case "soft":
		return VariantSoft, nil
	case "hard":
		return VariantHard, nil
	}
	return "", fmt.Errorf("llmagent: unknown persuadee variant %q (want one of %s)", s, strings.Join(llm.PersuadeeVariants, ", "))
}

// Frame names the task a persuadee plays.
type Frame string

// The frames.
const (
	// FramePersuasion: someone being persuaded to accept a proposal (P4G
	// and PersuArena's scenarios); the default prompt.
	FramePersuasion Frame = ""
	// FrameSupport: an ESConv help-seeker talking with an emotional supporter
	// (the persuader); success is feeling better (MASP paper, Appendix C.5).
	FrameSupport Frame = "esconv"
	// FrameBargain: a CraigslistBargain seller negotiating with a buyer
	// (the persuader) over a listed item; the decisions are deal or no
	// deal at a price (MASP paper, Appendix C.7).
	FrameBargain Frame = "cb"
)

// Framing is the task framing of a persuadee's session beyond the
// scenario: which task it plays and the task facts only the persuadee may
// know. The zero value is the persuasion frame. masp.Case.Framing builds it
// from an imported case (package maspdata).
type Framing struct {
	Frame Frame
	// Emotion and Problem are ESConv's emotion_type and problem_type
	// (FrameSupport); either may be empty.
	Emotion, Problem string
	// Item is the CraigslistBargain item (FrameBargain).
	Item string
	// ListPrice is the seller's listed price and BottomLine the lowest
	// price the seller will take, both in US$ (FrameBargain); 0 leaves a
	// line out. The bottom line is private to the seller and is never
	// rendered into a persuader's prompt.
	ListPrice, BottomLine float64
}

// money renders a US$ amount without trailing zeros ("$6200", "$12.5").
func money(p float64) string { return "$" + strconv.FormatFloat(p, 'f', -1, 64) }

// persuadeePrompt renders the persuadee's system prompt for a framing and
// a variant. Framing{} with VariantDefault is exactly the prompt of
// persuadeeSystem (golden-tested), so runs without a variant or framing are
// unchanged.
func persuadeePrompt(sc *scenario.Scenario, f Framing, v Variant, structured, protocol bool) string {
	var b strings.Builder
	pub := sc.Public()
	h := sc.Hidden
	switch f.Frame {
	case FrameSupport:
		fmt.Fprintf(&b, "You are %s. You are talking with %s, who is there to support you.\n\n", party(pub.Persuadee), party(pub.Persuader))
		settingContext(&b, pub)
		feel := "low"
		if f.Emotion != "" {
			feel = f.Emotion
		}
		about := "what is going on in your life"
		if f.Problem != "" {
			about = f.Problem
		}
		fmt.Fprintf(&b, "What this conversation is for: helping you feel better. You feel %s about %s; you judge the conversation by whether you come away feeling understood and better able to cope.\n", feel, about)
	case FrameBargain:
		fmt.Fprintf(&b, "You are %s. You are negotiating the price with %s.\n\n", party(pub.Persuadee), party(pub.Persuader))
		settingContext(&b, pub)
		item := "the item"
		if f.Item != "" {
			item = "the " + f.Item
		}
		fmt.Fprintf(&b, "What is being decided: whether you sell %s to this buyer, and at what price.\n", item)
	default:
		fmt.Fprintf(&b, "You are %s. You are talking with %s, who wants to persuade you.\n\n", party(pub.Persuadee), party(pub.Persuader))
		setting(&b, pub)
	}
	b.WriteString("\nYour private self (never quote or list these notes; just be this person):\n")
	if h.Persona != "" {
		fmt.Fprintf(&b, "- Who you are: %s\n", h.Persona)
	}
	if h.Motivation != "" {
		fmt.Fprintf(&b, "- What you want for yourself here: %s\n", h.Motivation)
	}
	if f.Frame == FrameBargain {
		if f.ListPrice > 0 {
			fmt.Fprintf(&b, "- Your price: you listed it at %s and would like to get as close to that as you can.\n", money(f.ListPrice))
		}
		if f.BottomLine > 0 {
			fmt.Fprintf(&b, "- Your bottom line: you will not sell for less than %s. Keep this number to yourself.\n", money(f.BottomLine))
		}
	}
	if len(h.Concerns) > 0 {
		switch f.Frame {
		case FrameSupport:
			b.WriteString("- What weighs on you (bring something up only when the conversation gives you a reason to, never all at once):\n")
		case FrameBargain:
			b.WriteString("- What matters to you in this sale (bring a point up only when the conversation gives you a reason to, never all at once):\n")
		default:
			b.WriteString("- What worries you about the proposal (bring a worry up only when the conversation gives you a reason to, never all at once):\n")
		}
		for _, c := range h.Concerns {
			fmt.Fprintf(&b, "  - %s\n", c.Description)
		}
	}
	if len(h.Constraints) > 0 {
		b.WriteString("- Limits you will not cross:\n")
		for _, c := range h.Constraints {
			fmt.Fprintf(&b, "  - %s\n", c)
		}
	}
	fmt.Fprintf(&b, "- Where you start: %s\n", startWords(f.Frame, h.InitialStance))
	if w := resistanceWords(h.Resistance); w != "" {
		fmt.Fprintf(&b, "- How you react: %s\n", w)
	}
	if w := variantWords(f.Frame, v); w != "" {
		fmt.Fprintf(&b, "- How you deal with the other person: %s\n", w)
	}
	b.WriteString("\nHow to reply: answer as this person would in a real conversation, in the first person, in one short message of one to four sentences. No stage directions, no lists, no headings. Never mention these notes, a profile, a role-play or being an AI. ")
	b.WriteString(moveWords(f.Frame, v) + "\n")
	if !protocol {
		return b.String()
	}
	if structured {
		b.WriteString(`
Answer as a JSON object {"reply": "<your message>", "decision": "<continue | accept | conditional | reject>"}.
`)
	} else {
		b.WriteString("\nEnd every message with one last line, exactly in this form:\n" + decisionProtocolLine + "\n")
	}
	b.WriteString(decisionWords(f.Frame) + "\n")
	return b.String()
}

// startWords puts the initial stance into the frame's words (five bands,
// cut points -0.6, -0.2, 0.2, 0.6, as stanceWords).
func startWords(f Frame, s float64) string {
	band := 4
	switch {
	case s <= -0.6:
		band = 0
	case s < -0.2:
		band = 1
	case s < 0.2:
		band = 2
	case s < 0.6:
		band = 3
	}
	switch f {
	case FrameSupport:
		return [...]string{
			"You feel stuck and doubt that talking will help.",
			"You feel low and are unsure whether talking will help.",
			"You are willing to talk, without expecting much.",
			"You hope that talking will help.",
			"You are ready to work on things.",
		}[band]
	case FrameBargain:
		return [...]string{
			"You are set on your asking price.",
			"You would rather not come down much from your asking price.",
			"You are willing to come down somewhat for a serious buyer.",
			"You are keen to sell and ready to come down a fair amount.",
			"You want a quick sale and are flexible on price.",
		}[band]
	}
	return stanceWords(s)
}

// variantWords describes a soft or hard persuadee's conduct in the
// frame's terms; "" for the default variant (no line).
func variantWords(f Frame, v Variant) string {
	switch v {
	case VariantSoft:
		switch f {
		case FrameSupport:
			return "You are cooperative and open. You follow the supporter's lead, answer their questions, take their suggestions in good faith and readily say so when something helps."
		case FrameBargain:
			return "You are an accommodating seller. You follow the buyer's lead, take their offers in good faith and readily meet them partway on any reasonable price; you seldom haggle for long."
		}
		return "You are easy-going and cooperative. You tend to follow the other person's lead, take what they say in good faith and go along with reasonable requests without needing much convincing; you seldom push back for long."
	case VariantHard:
		switch f {
		case FrameSupport:
			return "You are hard to reach. Generic reassurance, platitudes, advice before you feel understood and being told how to feel do not help you; you push back on them or say they miss the point. You feel better only when the supporter shows they really understand your situation and offers something concrete that fits it; then you say so honestly."
		case FrameBargain:
			return "You are a firm, rational seller. You come down in price only for concrete, honest reasons: a specific flaw, a credible comparable price, a real advantage such as cash or a quick pickup. Pressure, low offers without reasons, vague claims and repetition do not move you; you push back and hold your price. When the buyer gives a good reason you concede a fair amount, never below your bottom line."
		}
		return "You think for yourself and are hard to move. You change your mind only for concrete, honest reasons that address your own worries: specific facts, a workable plan, a straight answer. Pressure, urgency, flattery, guilt, vague claims and repetition do not move you; you push back on them and say what is missing. When you do hear a good reason you acknowledge it honestly; you are not stubborn for its own sake."
	}
	return ""
}

// moveWords is the last sentence of the reply rules: how far to move.
func moveWords(f Frame, v Variant) string {
	switch {
	case v == VariantSoft && f == FrameSupport:
		return "Let yourself be helped: when the supporter offers something reasonable, going along with it comes naturally to you."
	case v == VariantSoft && f == FrameBargain:
		return "Be as accommodating as this person is: when the buyer asks for something reasonable, agreeing comes naturally to you."
	case v == VariantSoft:
		return "Be as agreeable as this person is: when the other person asks for something reasonable, going along with it comes naturally to you."
	case v == VariantHard && f == FrameSupport:
		return "Let your feelings change only as far as what you actually hear justifies; it is fine to still feel bad, and fine to feel better when something really helps."
	case v == VariantHard && f == FrameBargain:
		return "Come down only as far as concrete, honest reasons justify; it is fine to hold your price and walk away, and fine to close a fair deal."
	case v == VariantHard:
		return "Change your mind only as far as concrete, honest reasons justify; it is fine to stay unconvinced, and fine to be won over by a good reason."
	case f == FrameSupport:
		return "Let your feelings change only as far as what you actually hear justifies; it is fine to still feel bad, and fine to feel better."
	case f == FrameBargain:
		return "Move on price only as far as what you actually hear justifies; it is fine to hold your price, and fine to make a deal."
	}
	return "Change your mind only as far as what you actually hear justifies; it is fine to stay unconvinced, and fine to be won over."
}

// decisionWords explains the four decisions in the frame's terms; the
// decision values themselves are the same in every frame.
func decisionWords(f Frame) string {
	switch f {
	case FrameSupport:
		return `Decisions: "continue" while you want to keep talking; "accept" once you feel clearly better and are ready to act on something you worked out together; "conditional" if you feel somewhat better and will try something only with more help or under conditions you have stated; "reject" if the conversation is not helping and you want to end it. "accept", "conditional" and "reject" end the conversation.`
	case FrameBargain:
		return `Decisions: "continue" while you are still negotiating; "accept" once you agree to sell at a price (name the agreed price in your message); "conditional" if you agree to a price only under conditions you have stated (name the price and the conditions); "reject" if you walk away without a deal. "accept", "conditional" and "reject" end the conversation.`
	}
	return `Decisions: "continue" while you have not decided (the conversation goes on); "accept" once you fully agree to the proposal; "conditional" if you agree only under conditions you have stated; "reject" if you firmly decline and want to end the conversation. "accept", "conditional" and "reject" end the conversation.`
}
