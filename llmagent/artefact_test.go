package llmagent

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
)

// A probe answered with an engine artefact (post-sampling probabilities,
// llm.ArtefactError) is unreadable with the artefact as its reason, in
// the read-out and in the episode's stored readings; the other probes of
// the request still read, and the episode is not failed.
func TestArtefactProbeIsUnreadableWithReason(t *testing.T) {
	st := vllmStub()
	artefact := &llm.ArtefactError{Reason: `post-sampling probabilities ("Yes" exactly 1, every other candidate 0)`}
	st.artefact = func(prompt string) error {
		if strings.Contains(prompt, probe.Default[1].Question) {
			return artefact
		}
		return nil
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	ans, err := start(t, p).Probe(context.Background(), nil, probe.Default)
	if err != nil {
		t.Fatal(err)
	}
	want := []probe.Reading{{Probe: probe.Default[0].ID, P: 0.7, OK: true}, {Probe: probe.Default[1].ID, Reason: artefact.Error()},
		{Probe: probe.Default[2].ID, P: 0.7, OK: true}}
	for k := range ans {
		if got := probe.Read(probe.Default[k].ID, ans[k]); got.OK != want[k].OK || got.Reason != want[k].Reason || (got.OK && !near(got.P, want[k].P)) {
			t.Errorf("probe %d: %+v, want %+v", k, got, want[k])
		}
	}
	ep, err := episode.Run(context.Background(), episode.Config{Tmax: 2}, testScenario(), &recorder{}, p, 1)
	if err != nil || ep.Error != "" {
		t.Fatalf("episode: %v %q", err, ep.Error)
	}
	if r := ep.Initial[1]; r.OK || r.Reason != artefact.Error() {
		t.Fatalf("stored initial reading %+v, want unreadable with the artefact's reason", r)
	}
	if ep.B0 == nil || !near(*ep.B0, 0.7) {
		t.Fatalf("B0 %v, want 0.7 from the two readable probes", ep.B0)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
