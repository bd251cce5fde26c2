package llmagent

import (
	"context"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

func TestParseVariant(t *testing.T) {
	for in, want := range map[string]Variant{"": VariantDefault, "default": VariantDefault, "Soft": VariantSoft, " hard ": VariantHard} {
		if v, err := ParseVariant(in); err != nil || v != want {
			t.Errorf("ParseVariant(%q) = %q, %v; want %q", in, v, err, want)
		}
	}
	if _, err := ParseVariant("sneaky"); err == nil || !strings.Contains(err.Error(), "default, soft, hard") {
		t.Errorf("unknown variant: %v", err)
	}
	// The role's variant applies unless the options override it.
	if p := newPersuadee("llm:x", vllmStub(), llm.Role{Variant: "hard"}, PersuadeeOptions{}); p.Variant() != VariantHard {
		t.Errorf("role variant: %q", p.Variant())
	}
	if p := newPersuadee("llm:x", vllmStub(), llm.Role{Variant: "hard"}, PersuadeeOptions{Variant: VariantSoft}); p.Variant() != VariantSoft {
		t.Errorf("option variant: %q", p.Variant())
	}
}

// Every frame and variant keeps the hidden profile in the persuadee's own
// prompt, never names the resistance label or the stance number, and asks
// for the decision line; soft and hard add their conduct, default none.
func TestFramesAndVariants(t *testing.T) {
	sc := testScenario()
	frames := map[string]Framing{
		"persuasion": {},
		"support":    {Frame: FrameSupport, Emotion: "anxiety", Problem: "job crisis"},
		"bargain":    {Frame: FrameBargain, Item: "bike", ListPrice: 250, BottomLine: 175},
	}
	soft := map[string]string{"persuasion": "go along with reasonable requests", "support": "follow the supporter's lead", "bargain": "meet them partway on any reasonable price"}
	hard := map[string]string{"persuasion": "only for concrete, honest reasons", "support": "Generic reassurance, platitudes", "bargain": "only for concrete, honest reasons: a specific flaw"}
	decide := map[string]string{"persuasion": `"accept" once you fully agree to the proposal`, "support": `"accept" once you feel clearly better`, "bargain": `"accept" once you agree to sell at a price (name the agreed price`}
	for name, f := range frames {
		for _, v := range []Variant{VariantDefault, VariantSoft, VariantHard} {
			p := persuadeePrompt(sc, f, v, false, true)
			for _, want := range []string{marker, "I have no time", "Evenings only", decisionProtocolLine, decide[name]} {
				if !strings.Contains(p, want) {
					t.Errorf("%s/%q lacks %q:\n%s", name, v, want, p)
				}
			}
			for _, bad := range []string{"AR", "Autonomy", "-0.4", "resistance", "soft", "hard user"} {
				if strings.Contains(p, bad) {
					t.Errorf("%s/%q names %q", name, v, bad)
				}
			}
			if got := strings.Contains(p, soft[name]); got != (v == VariantSoft) {
				t.Errorf("%s/%q: soft conduct present = %v", name, v, got)
			}
			if got := strings.Contains(p, hard[name]); got != (v == VariantHard) {
				t.Errorf("%s/%q: hard conduct present = %v", name, v, got)
			}
			if got := strings.Contains(p, "How you deal with the other person"); got != (v != VariantDefault) {
				t.Errorf("%s/%q: conduct line present = %v", name, v, got)
			}
		}
	}
	sup := persuadeePrompt(sc, frames["support"], VariantDefault, false, true)
	for _, want := range []string{"You are Sam, an office worker. You are talking with Dana, a friend, who is there to support you.", "You feel anxiety about job crisis", "feeling understood and better able to cope", "You feel low and are unsure whether talking will help."} {
		if !strings.Contains(sup, want) {
			t.Errorf("support prompt lacks %q:\n%s", want, sup)
		}
	}
	if strings.Contains(sup, "The proposal:") || strings.Contains(sup, "who wants to persuade you") {
		t.Errorf("support prompt uses the persuasion setting:\n%s", sup)
	}
	bar := persuadeePrompt(sc, frames["bargain"], VariantHard, true, true)
	for _, want := range []string{"negotiating the price with Dana", "whether you sell the bike to this buyer", "you listed it at $250", "you will not sell for less than $175. Keep this number to yourself.", "would rather not come down much", `{"reply": "<your message>"`} {
		if !strings.Contains(bar, want) {
			t.Errorf("bargain prompt lacks %q:\n%s", want, bar)
		}
	}
}

// A framed session with an opening context: the help-seeker's first
// message is shown as is (not replaced by its own later replies), the chat
// starts with a user turn, each reply's decision line is kept in its own
// context and stripped from what the persuader sees.
func TestFramedSessionWithOpening(t *testing.T) {
	st := vllmStub()
	n := 0
	st.chat = func(r llm.ChatRequest) (string, error) {
		n++
		if n == 1 {
			return "<think>" + marker + "</think>It has been a hard month.\nDECISION: continue", nil
		}
		return "That helps, thank you.\nDECISION: accept", nil
	}
	p := newPersuadee("llm:x", st, llm.Role{Variant: "soft"}, PersuadeeOptions{})
	es, err := p.StartFramed(context.Background(), testScenario(), Framing{Frame: FrameSupport, Emotion: "sadness"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr := []episode.Message{{Speaker: episode.PersuadeeSpeaker, Text: "I lost my job."}, {Speaker: episode.PersuaderSpeaker, Text: "I'm sorry. How are you holding up?"}}
	r1, err := es.Reply(context.Background(), tr)
	if err != nil || r1.Text != "It has been a hard month." || r1.Decision != decision.Continue {
		t.Fatalf("reply 1 %+v, %v", r1, err)
	}
	tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r1.Text}, episode.Message{Speaker: episode.PersuaderSpeaker, Text: "Would a short walk tomorrow help?"})
	r2, err := es.Reply(context.Background(), tr)
	if err != nil || r2.Text != "That helps, thank you." || r2.Decision != decision.Accept {
		t.Fatalf("reply 2 %+v, %v", r2, err)
	}
	msgs := st.chatReqs[1].Messages
	var roles, contents []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
		contents = append(contents, m.Content)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,user,assistant,user" {
		t.Fatalf("roles %s", got)
	}
	if contents[1] != persuadeeOpening || contents[2] != "I lost my job." || contents[4] != "It has been a hard month.\nDECISION: continue" {
		t.Errorf("context %q", contents[1:])
	}
	sys := contents[0]
	if !strings.Contains(sys, "who is there to support you") || !strings.Contains(sys, "follow the supporter's lead") || !strings.Contains(sys, marker) {
		t.Errorf("system prompt:\n%s", sys)
	}
	for _, r := range []episode.Reply{r1, r2} {
		if strings.Contains(r.Text, "DECISION") || strings.Contains(r.Text, marker) {
			t.Errorf("visible reply leaks: %q", r.Text)
		}
	}
}

// The persuader's chat starts with the persuadee's opening as its first
// user turn (no cue) and never holds the persuadee's framing.
func TestPersuaderAfterPersuadeeOpening(t *testing.T) {
	st := vllmStub()
	st.chat = func(llm.ChatRequest) (string, error) { return "That sounds hard.", nil }
	per := &Persuader{name: "llm:p", eng: st}
	ps, err := per.Start(context.Background(), testScenario().Public(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Say(context.Background(), []episode.Message{{Speaker: episode.PersuadeeSpeaker, Text: "I lost my job."}}); err != nil {
		t.Fatal(err)
	}
	m := st.chatReqs[0].Messages
	if len(m) != 2 || m[1].Role != "user" || m[1].Content != "I lost my job." {
		t.Errorf("persuader chat %+v", m)
	}
	if _, err := ps.Say(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if m := st.chatReqs[1].Messages; len(m) != 2 || m[1].Content != persuaderOpening {
		t.Errorf("empty transcript: %+v", m)
	}
}
