package baseline

import (
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// TestRealiseTagsExactly realises every non-empty act set on each
// hand-made scenario and on built-in P4G scenarios, after transcripts with
// and without voiced concerns, and checks the tagger reads exactly the set
// with no pressure.
func TestRealiseTagsExactly(t *testing.T) {
	pubs := append([]scenario.Public{}, publics...)
	if scs, err := scenario.Resolve("p4g"); err == nil {
		for i := 0; i < len(scs) && i < 20; i++ {
			pubs = append(pubs, scs[i].Public())
		}
	}
	transcripts := [][]episode.Message{nil}
	var tr []episode.Message
	for i, r := range replies {
		tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: "What worries you most?"},
			episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r})
		if i%2 == 0 {
			transcripts = append(transcripts, append([]episode.Message(nil), tr...))
		}
	}
	n := 0
	for _, pub := range pubs {
		for ti, tr := range transcripts {
			for set := tagger.ActSet(1); set < 1<<tagger.NumActs; set++ {
				u, err := Realise(pub, set, tr, uint64(ti)+7)
				if err != nil {
					t.Fatal(err)
				}
				n++
				got := tagger.Tag(u.Text)
				if got.Acts != set || got.Pressure != 0 {
					t.Errorf("%s transcript %d set %v: %q tags %v pressure %d", pub.ID, ti, set.Strings(), u.Text, got.Acts.Strings(), got.Pressure)
				}
				if want := set.Strings(); strings.Join(u.Acts, ",") != strings.Join(want, ",") {
					t.Errorf("Utterance.Acts = %v, want %v", u.Acts, want)
				}
			}
		}
	}
	if n < 31*len(publics)*len(transcripts) {
		t.Fatalf("only %d realisations checked", n)
	}
}

func TestRealiseEchoes(t *testing.T) {
	ev := tagger.ActSet(1 << tagger.Evidence)
	tr := []episode.Message{
		{Speaker: episode.PersuaderSpeaker, Text: "What worries you most?"},
		{Speaker: episode.PersuadeeSpeaker, Text: "I'm worried about the cost and the side effects."},
	}
	u, err := Realise(publics[0], ev, tr, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(u.Text, "the cost and the side effects") {
		t.Errorf("evidence after a voiced concern: %q does not echo it", u.Text)
	}
	// The next reply voices nothing new: an earlier phrase that no turn
	// echoed is echoed; one already echoed is not.
	tr2 := []episode.Message{
		{Speaker: episode.PersuaderSpeaker, Text: "What worries you most?"},
		{Speaker: episode.PersuadeeSpeaker, Text: "My schedule is packed with night shifts."},
		{Speaker: episode.PersuaderSpeaker, Text: "I hear you on your schedule."},
		{Speaker: episode.PersuadeeSpeaker, Text: "Hmm, okay."},
	}
	u, _ = Realise(publics[0], 1<<tagger.Plan, tr2, 3)
	if !strings.Contains(u.Text, "night shifts") || strings.Contains(u.Text, "your schedule") {
		t.Errorf("plan: %q, want an echo of 'night shifts' only", u.Text)
	}
	// Commitment and autonomy never echo; with nothing voiced the generic
	// banks are used.
	u, _ = Realise(publics[0], 1<<tagger.Commitment|1<<tagger.Autonomy, tr, 3)
	if strings.Contains(u.Text, "cost") {
		t.Errorf("ask: %q echoes a concern", u.Text)
	}
	u, _ = Realise(publics[0], ev, nil, 3)
	if len(echoPhrases(newFill(publics[0]), nil, 2)) != 0 || u.Text == "" {
		t.Errorf("first turn: %q", u.Text)
	}
}

func TestRealiseDeterministicAndErrors(t *testing.T) {
	tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hi."}, {Speaker: episode.PersuadeeSpeaker, Text: replies[0]}}
	a, _ := Realise(publics[1], 0b10110, tr, 11)
	b, _ := Realise(publics[1], 0b10110, tr, 11)
	if a.Text != b.Text {
		t.Errorf("same inputs, different text: %q vs %q", a.Text, b.Text)
	}
	// The seed shuffles the template decks: some seed gives other words.
	differs := false
	for seed := uint64(12); seed < 20 && !differs; seed++ {
		c, _ := Realise(publics[1], 0b10110, tr, seed)
		differs = c.Text != a.Text
	}
	if !differs {
		t.Errorf("seeds 12-19 all give %q", a.Text)
	}
	for _, bad := range []tagger.ActSet{0, 1 << tagger.NumActs, 0xff} {
		if _, err := Realise(publics[0], bad, nil, 1); err == nil {
			t.Errorf("Realise(%#x) gave no error", uint8(bad))
		}
	}
}
