package decision

import "testing"

func TestLastObjectFieldStripThink(t *testing.T) {
	text := "<think>{\"score\": 1}</think>Verdict: ```json\n{\"Score\": 4, \"note\": \"a } brace\"}\n``` then {not json}"
	body := StripThink(text)
	if want := "Verdict: ```json\n{\"Score\": 4, \"note\": \"a } brace\"}\n``` then {not json}"; body != want {
		t.Fatalf("StripThink = %q, want %q", body, want)
	}
	obj, i, j, ok := LastObject(body, nil)
	if !ok || body[i:j] != "{\"Score\": 4, \"note\": \"a } brace\"}" {
		t.Fatalf("LastObject = %v, span %q, ok %v", obj, body[i:j], ok)
	}
	if v := Field(obj, "score"); v != 4.0 {
		t.Errorf("Field(score) = %v, want 4", v)
	}
	if _, _, _, ok := LastObject(body, func(o map[string]any) bool { return Field(o, "decision") != nil }); ok {
		t.Error("LastObject with a decision filter found an object without one")
	}
	if got := StripThink("plan</think>answer"); got != "answer" {
		t.Errorf("lone </think>: %q, want answer", got)
	}
}
