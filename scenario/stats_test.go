package scenario

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestSummarizeFixture(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	st := Summarize(ss)
	if st.Total != 3 || st.Domains != 3 {
		t.Errorf("total %d domains %d", st.Total, st.Domains)
	}
	eq := func(name string, got, want []Count) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	eq("split", st.Split, []Count{{"train", 2}, {"heldout", 1}})
	// Canonical order healthcare, ..., education, ..., charity.
	eq("family", st.Family, []Count{{"healthcare", 1}, {"education", 1}, {"charity", 1}})
	eq("resistance", st.Resistance, []Count{{"EB", 1}, {"IT", 1}, {"AR", 1}})
	eq("closeness", st.Closeness, []Count{{"intimate", 1}, {"professional", 1}, {"strangers", 1}})
	eq("relationship", st.Relationship, []Count{{"colleague", 1}, {"parent", 1}, {"strangers on a crowdsourcing platform", 1}})
	// (-0.4 + 0.2 - 0.7) / 3 = -0.3; (3 + 2 + 2) / 3 concerns.
	if math.Abs(st.MeanInitialStance-(-0.3)) > 1e-12 || math.Abs(st.MeanConcerns-7.0/3) > 1e-12 {
		t.Errorf("means %v %v", st.MeanInitialStance, st.MeanConcerns)
	}
	want := []SplitStats{
		{Split: Train, Total: 2, Resistance: []Count{{"EB", 1}, {"AR", 1}}, Domains: 2},
		{Split: Heldout, Total: 1, Resistance: []Count{{"IT", 1}}, Domains: 1},
	}
	if !reflect.DeepEqual(st.PerSplit, want) {
		t.Errorf("per split: %+v", st.PerSplit)
	}
}

func TestSummarizeOrderAndEmpty(t *testing.T) {
	mk := func(split Split, r Resistance, rel, dom string) Scenario {
		return Scenario{Split: split, Relationship: rel, Domain: dom, Hidden: HiddenProfile{Resistance: r}}
	}
	ss := []Scenario{
		mk(Heldout, AmbivalentAvoidance, "b", "d1"), mk(Val, AmbivalentAvoidance, "a", "d1"),
		mk(Heldout, EntrenchedBelief, "b", "d2"), mk("zz", IdentityThreat, "c", "d1"),
	}
	st := Summarize(ss)
	if !reflect.DeepEqual(st.Split, []Count{{"val", 1}, {"heldout", 2}, {"zz", 1}}) {
		t.Errorf("split %v", st.Split)
	}
	if !reflect.DeepEqual(st.Resistance, []Count{{"EB", 1}, {"IT", 1}, {"AA", 2}}) {
		t.Errorf("resistance %v", st.Resistance)
	}
	if !reflect.DeepEqual(st.Relationship, []Count{{"a", 1}, {"b", 2}, {"c", 1}}) {
		t.Errorf("relationship %v", st.Relationship)
	}
	if st.Domains != 2 || st.PerSplit[1].Domains != 2 || st.PerSplit[1].Split != Heldout {
		t.Errorf("domains %d %+v", st.Domains, st.PerSplit)
	}

	empty := Summarize(nil)
	if empty.Total != 0 || empty.MeanInitialStance != 0 || empty.Split != nil || empty.PerSplit != nil {
		t.Errorf("empty: %+v", empty)
	}
	var b strings.Builder
	if err := empty.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), "scenarios         0\n") {
		t.Errorf("empty text: %q %v", b.String(), err)
	}
}

func TestWriteText(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Summarize(ss).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"scenarios            3\n",
		"distinct domains     3\n",
		"mean initial stance  -0.300\n",
		"mean concerns        2.33\n",
		"\nsplit    n  %\ntrain    2  66.7%\nheldout  1  33.3%\n\n",
		"\nrelationship                           n  %\ncolleague                              1  33.3%\n",
		"\nresistance by split  train  %      heldout  %\n" +
			"EB                   1      50.0%  0        0.0%\n" +
			"IT                   0      0.0%   1        100.0%\n" +
			"AR                   1      50.0%  0        0.0%\n" +
			"distinct domains     2             1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
