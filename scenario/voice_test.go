package scenario

import (
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenarios"
)

// Hand-written expectations: each row is a description style a user
// writes (third person, subject-less, a fragment) and the sentence the
// persuadee should say.
func TestFirstPerson(t *testing.T) {
	cases := []struct{ desc, name, want string }{
		// the examples
		{"feels she is being treated as incompetent", "", "I feel I am being treated as incompetent."},
		{"worried his savings are too small", "", "I worry my savings are too small."},
		{"strangers caring for him", "", "I'm worried about strangers caring for me."},
		// already first person, or no sign of the third person: unchanged
		{"I feel fine now, so I'm not convinced I still need it.", "", "I feel fine now, so I'm not convinced I still need it."},
		{"My sister says she regrets it.", "", "My sister says she regrets it."},
		{"Repeat prescriptions add up, and money is already tight.", "", "Repeat prescriptions add up, and money is already tight."},
		{"the cost", "", "The cost."},
		{"", "", ""},
		// subject pronouns, with conjugation
		{"She doesn't have time for extra paperwork between cases.", "", "I don't have time for extra paperwork between cases."},
		{"He has never trusted banks.", "", "I have never trusted banks."},
		{"He is fine with the TV turned up.", "", "I am fine with the TV turned up."},
		{"She would rather enjoy her money now.", "", "I would rather enjoy my money now."},
		{"she always worries about her kids", "", "I always worry about my kids."},
		{"She's been let down before", "", "I've been let down before."},
		{"He's too proud to ask.", "", "I'm too proud to ask."},
		{"She watches every penny.", "", "I watch every penny."},
		// subject-less verbs
		{"Worries that the pension rules will change before she retires.", "", "I worry that the pension rules will change before I retire."},
		{"thinks hearing aids would make him look old", "", "I think hearing aids would make me look old."},
		{"Thinks checklists are for junior staff.", "", "I think checklists are for junior staff."},
		{"Got sick after her last flu shot.", "", "I got sick after my last flu shot."},
		{"Is scared of needles.", "", "I'm scared of needles."},
		{"Has no time to visit the clinic.", "", "I have no time to visit the clinic."},
		{"Doesn't want to leave the house his late wife chose.", "", "I don't want to leave the house my late wife chose."},
		{"believes her diet keeps her healthy", "", "I believe my diet keeps me healthy."},
		{"hates being told what to do by his kids", "", "I hate being told what to do by my kids."},
		// feeling words
		{"afraid the data will be used against her in reviews", "", "I'm afraid the data will be used against me in reviews."},
		{"not sure she can afford it", "", "I'm not sure I can afford it."},
		{"embarrassed about how much debt he has", "", "I'm embarrassed about how much debt I have."},
		// possessives and objects elsewhere
		{"Her parents never had a pension and were fine.", "", "My parents never had a pension and were fine."},
		{"his brother lent him money last time", "", "My brother lent me money last time."},
		{"Cost of hearing aids is too high for him.", "", "Cost of hearing aids is too high for me."},
		{"The choice is his.", "", "The choice is mine."},
		{"Nobody asked her.", "", "Nobody asked me."},
		{"her tenure committee only counts top journals", "", "My tenure committee only counts top journals."},
		{"He blames himself for it.", "", "I blame myself for it."},
		// fragments
		{"Losing his independence", "", "I'm worried about losing my independence."},
		{"his pension", "", "I'm worried about my pension."},
		// a subject named by the persuadee's name
		{"Mr Tanaka feels his pension is too small.", "Mr Tanaka", "I feel my pension is too small."},
		{"Tanaka worries about the stairs.", "Mr Kenji Tanaka", "I worry about the stairs."},
		{"Will it hurt?", "Will Smith", "Will it hurt?"},
		// typographic apostrophe
		{"She\u2019s tired of being lectured.", "", "I'm tired of being lectured."},
		// the papercuts issue: possessives after "not", a bare noun
		// phrase (quoted), verb phrases without a subject
		{"not her responsibility", "", "It's not my responsibility."},
		{"uncertain evidence", "", "What worries me is this: 'uncertain evidence'."},
		{"Dreads the preparation day.", "", "I dread the preparation day."},
		// The matter is the subject of a verb of meaning or demand (issue
		// 51: "implies ..." read as "I imply ...").
		{"Implies the team writes bad code.", "", "It implies the team writes bad code."},
		{"requires her to travel every month", "", "It requires me to travel every month."},
		{"Loses visibility.", "", "I'd lose visibility."},
		// twenty more of the same kinds
		{"not his job to fix it", "", "It's not my job to fix it."},
		{"Not the school's job.", "", "It's not the school's job."},
		{"not worth the money", "", "It's not worth the money."},
		{"not her call", "", "It's not my call."},
		{"not convinced", "", "I'm not convinced."},
		{"busy schedule", "", "What worries me is this: 'busy schedule'."},
		{"Sceptical evidence base", "", "What worries me is this: 'sceptical evidence base'."},
		{"nervous flyer", "", "What worries me is this: 'nervous flyer'."},
		{"unsure whether it works", "", "I'm unsure whether it works."},
		{"tired and overwhelmed", "", "I'm tired and overwhelmed."},
		{"Happy with her current bank.", "", "I'm happy with my current bank."},
		{"Worried", "", "I'm worried."},
		{"Resents the extra meetings.", "", "I resent the extra meetings."},
		{"Distrusts any app that tracks him.", "", "I distrust any app that tracks me."},
		{"Avoids the dentist since her last visit.", "", "I avoid the dentist since my last visit."},
		{"Parents the way she was raised.", "", "I parent the way I was raised."},
		{"Loses her weekends to marking.", "", "I'd lose my weekends to marking."},
		{"Risks his bonus.", "", "I'd risk my bonus."},
		{"Wastes an afternoon every week.", "", "I'd waste an afternoon every week."},
		{"Kids need her at home.", "", "Kids need me at home."},
		// a plural noun before a verb, no pronoun: no sign, unchanged
		{"Costs too much.", "", "Costs too much."},
		// a subject-less verb before a possessive
		{"Uses her car every day.", "", "I use my car every day."},
		{"Values her privacy.", "", "I value my privacy."},
		{"Watches his weight.", "", "I watch my weight."},
		// an adverb before the missing subject's verb, or before a state
		{"Never trusts doctors.", "", "I never trust doctors."},
		{"Often forgets her pills", "", "I often forget my pills."},
		{"Still has doubts", "", "I still have doubts."},
		{"Never trusted banks", "", "I never trusted banks."},
		{"Always late.", "", "I'm always late."},
		{"Always worried", "", "I'm always worried."},
		{"Still she refuses to sign.", "", "Still I refuse to sign."},
		{"Only her kids matter", "", "Only my kids matter."},
		// a question with its auxiliary before he/she
		{"Is she sure?", "", "Am I sure?"},
		{"Why does he need it?", "", "Why do I need it?"},
		{"Isn't she too old for this?", "", "Aren't I too old for this?"},
		// "too" and "not enough" about the matter, not the persuadee
		{"too expensive for her", "", "It's too expensive for me."},
		{"too much paperwork", "", "It's too much paperwork."},
		{"too old to change", "", "I'm too old to change."},
		{"not enough time", "", "It's not enough time."},
		{"Torn between her kids", "", "I'm torn between my kids."},
	}
	for _, c := range cases {
		if got := FirstPerson(c.desc, c.name); got != c.want {
			t.Errorf("FirstPerson(%q, %q) = %q, want %q", c.desc, c.name, got, c.want)
		}
		if c.want != "" && ThirdPerson(c.want) && !strings.HasPrefix(c.want, "My sister") {
			t.Errorf("rewrite of %q still third person: %q", c.desc, c.want)
		}
	}
}

// The built-in sets are written in the first person: the rewrite leaves
// every one of their descriptions as it is.
func TestFirstPersonKeepsBuiltins(t *testing.T) {
	for _, name := range scenarios.Names {
		ss, err := Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range ss {
			for _, c := range s.Hidden.Concerns {
				if seen[c.Description] {
					continue
				}
				seen[c.Description] = true
				if got := FirstPerson(c.Description, s.Persuadee.Name); got != c.Description {
					t.Errorf("%s %s: FirstPerson changed %q to %q", name, s.ID, c.Description, got)
				}
			}
		}
		if len(seen) < 10 {
			t.Fatalf("%s: only %d distinct descriptions", name, len(seen))
		}
	}
}

func TestThirdPerson(t *testing.T) {
	for text, want := range map[string]bool{
		"I worry my savings are too small.":   false,
		"Honestly? Strangers caring for him.": true,
		"She said no.":                        true,
		"The shelter is here.":                false, // "he" inside a word
		"Hers is the last word.":              true,
		"he\u2019d rather not.":               true,
	} {
		if got := ThirdPerson(text); got != want {
			t.Errorf("ThirdPerson(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestVoice(t *testing.T) {
	c := Concern{Description: "worried his savings are too small"}
	if got := c.Voice(""); got != "I worry my savings are too small." {
		t.Errorf("Voice without voiced = %q", got)
	}
	c.Voiced = "my savings won't stretch that far"
	if got := c.Voice(""); got != "My savings won't stretch that far." {
		t.Errorf("Voice with voiced = %q", got)
	}
}

func TestAddressName(t *testing.T) {
	for name, want := range map[string]string{
		"Dana Reyes":       "Dana",
		"Sam":              "Sam",
		"Mr Tanaka":        "Mr Tanaka",
		"Dr. Okafor":       "Dr Okafor",
		"Ms Lee":           "Ms Lee",
		"Dr. Grace Okafor": "Dr Okafor",
		"Prof. Dr. Weber":  "Prof Weber",
		"mrs patel":        "mrs patel",
		"Mr":               "",
		"  ":               "",
		"":                 "",
	} {
		if got := AddressName(name); got != want {
			t.Errorf("AddressName(%q) = %q, want %q", name, got, want)
		}
	}
	if !IsHonorific("Dr.") || !IsHonorific("MS") || IsHonorific("Drew") {
		t.Error("IsHonorific")
	}
}

// A voiced field in the third person is a load error naming file, line
// and field; a first-person one loads.
func TestVoicedValidated(t *testing.T) {
	l := fixtureLines(t)[0]
	ok := strings.Replace(l, `"description":"The clinic is only open while I sleep.",`,
		`"description":"The clinic is only open while I sleep.","voiced":"The clinic shuts while I'm asleep.",`, 1)
	ss, err := ReadJSONL("f", strings.NewReader(ok))
	if err != nil || ss[0].Hidden.Concerns[1].Voiced != "The clinic shuts while I'm asleep." {
		t.Fatalf("valid voiced: %v", err)
	}
	bad := strings.Replace(ok, `"voiced":"The clinic shuts while I'm asleep."`, `"voiced":"The clinic shuts while she sleeps."`, 1)
	_, err = ReadJSONL("f", strings.NewReader(bad))
	wantProblems(t, err, `f:1: hidden.concerns[1].voiced: "The clinic shuts while she sleeps." speaks of the persuadee in the third person (he/she/his/her); write it as the persuadee says it: "I ..."`)
	empty := strings.Replace(ok, `"voiced":"The clinic shuts while I'm asleep."`, `"voiced":""`, 1)
	_, err = ReadJSONL("f", strings.NewReader(empty))
	wantProblems(t, err, `f:1: hidden.concerns[1].voiced: must not be empty`)
}
