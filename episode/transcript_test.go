package episode

import (
	"reflect"
	"testing"
)

func TestEpisodeTranscript(t *testing.T) {
	ep := &Episode{Turns: []Turn{{T: 1, Persuader: "Would you join?", Persuadee: "Maybe."}, {T: 2, Persuader: "It is free.", Persuadee: "Then yes."}}}
	want := []Message{
		{Speaker: PersuaderSpeaker, Text: "Would you join?"}, {Speaker: PersuadeeSpeaker, Text: "Maybe."},
		{Speaker: PersuaderSpeaker, Text: "It is free."}, {Speaker: PersuadeeSpeaker, Text: "Then yes."},
	}
	if got := ep.Transcript(); !reflect.DeepEqual(got, want) {
		t.Errorf("Transcript() = %+v, want %+v", got, want)
	}
	if got := (&Episode{}).Transcript(); got != nil {
		t.Errorf("no turns: %+v, want nil", got)
	}
}
