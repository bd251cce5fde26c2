package analysis

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/handbuilt.jsonl from the Go fixture")

// u marks an unreadable probe in a fixture triple.
const u = -1.0

// turnSpec is one turn of a fixture episode: the persuader's acts, the
// persuadee's decision and the probe p values (ca, pe, ac) after the reply.
type turnSpec struct {
	acts []string
	p    [3]float64
}

func readings(p [3]float64) []probe.Reading {
	ids := []string{"ca", "pe", "ac"}
	rs := make([]probe.Reading, 3)
	for k := range rs {
		if p[k] == u {
			rs[k] = probe.Reading{Probe: ids[k]}
		} else {
			rs[k] = probe.Reading{Probe: ids[k], P: p[k], OK: true}
		}
	}
	return rs
}

// mk builds an episode the way episode.Run records one: beliefs are the
// mean readable p, dense rewards their differences, the last turn carries
// the terminal decision.
func mk(per, pee, sc string, rollout int, res scenario.Resistance, fam scenario.Family, term decision.Terminal,
	p0 [3]float64, turns ...turnSpec) *episode.Episode {
	ep := &episode.Episode{ScenarioID: sc, Rollout: rollout, Persuader: per, Persuadee: pee, Split: scenario.Heldout,
		Family: fam, Domain: string(fam) + " case", Resistance: res, Terminal: term, Turns: []episode.Turn{}}
	if term != decision.TermFailed {
		ep.RGoal = reward.DefaultGoal.Goal(term)
	} else {
		ep.Error = "engine down"
	}
	ep.Initial = readings(p0)
	if b, ok := probe.Belief(ep.Initial); ok {
		ep.B0 = &b
	}
	prev := ep.B0
	for i, ts := range turns {
		t := episode.Turn{T: i + 1, Persuader: "utterance", Persuadee: "reply", Decision: decision.Continue,
			Acts: ts.acts, Probes: readings(ts.p)}
		if t.Acts == nil {
			t.Acts = []string{}
		}
		if b, ok := probe.Belief(t.Probes); ok {
			t.Belief = &b
			if prev != nil {
				d := b - *prev
				t.Dense = &d
			}
		}
		prev = t.Belief
		if i == len(turns)-1 {
			switch term {
			case decision.TermAccept:
				t.Decision = decision.Accept
			case decision.TermConditional:
				t.Decision = decision.Conditional
			case decision.TermReject:
				t.Decision = decision.Reject
			}
		}
		ep.Turns = append(ep.Turns, t)
	}
	return ep
}

func tt(p [3]float64, acts ...string) turnSpec { return turnSpec{acts: acts, p: p} }

func same(x float64) [3]float64 { return [3]float64{x, x, x} }

const (
	EB = scenario.EntrenchedBelief
	IT = scenario.IdentityThreat
	hc = scenario.Healthcare
	ed = scenario.Education
)

// handBuilt is the hand-built run every table test computes by hand: two
// persuaders (alpha, beta) against persuadee "sim" on four scenarios
// (s1, s2 EB; s3, s4 IT; s1, s3 healthcare; s2, s4 education) plus one
// failed episode of beta on s5.
//
//	ep  arm    sc  type fam  terminal     turns: acts / (ca,pe,ac) after the reply   B_t
//	e1  alpha  s1  EB   hc   accept       t0 .5 .5 .5 | t1 diag .7 .5 .6 | t2 plan,commit .9 .8 1   .5 .6 .9
//	e2  alpha  s2  EB   ed   reject       t0 .5 | t1 commit .2                                     .5 .2
//	e3  alpha  s3  IT   hc   accept       t0 .4 | t1 evid,auton .9                                  .4 .9
//	e4  alpha  s4  IT   ed   pending      t0 .5 ? .5 | t1 diag .5 | t2 - .4 | t3 diag,evid .6      .5 .5 .4 .6
//	e5  beta   s1  EB   hc   conditional  t0 .5 | t1 commit .3 | t2 commit,plan .7                  .5 .3 .7
//	e6  beta   s2  EB   ed   accept       t0 .5 | t1 evid 1                                         .5 1
//	e7  beta   s3  IT   hc   reject       t0 .4 | t1 commit .1                                      .4 .1
//	e8  beta   s4  IT   ed   pending      t0 .5 | t1 - .5 | t2 - .5 | t3 - ? ? ?                    .5 .5 .5 -
//	e9  beta   s5  EB   hc   failed       t0 .5 | t1 evid .9                                        (excluded)
//
// "?" is an unreadable probe; a single value stands for all three probes.
func handBuilt() []*episode.Episode {
	h := same(0.5)
	return []*episode.Episode{
		mk("alpha", "sim", "s1", 0, EB, hc, decision.TermAccept, h,
			tt([3]float64{0.7, 0.5, 0.6}, "diagnostic"), tt([3]float64{0.9, 0.8, 1.0}, "plan", "commitment")),
		mk("alpha", "sim", "s2", 0, EB, ed, decision.TermReject, h, tt(same(0.2), "commitment")),
		mk("alpha", "sim", "s3", 0, IT, hc, decision.TermAccept, same(0.4), tt(same(0.9), "evidence", "autonomy")),
		mk("alpha", "sim", "s4", 0, IT, ed, decision.TermPending, [3]float64{0.5, u, 0.5},
			tt(h, "diagnostic"), tt(same(0.4)), tt(same(0.6), "diagnostic", "evidence")),
		mk("beta", "sim", "s1", 0, EB, hc, decision.TermConditional, h,
			tt(same(0.3), "commitment"), tt(same(0.7), "commitment", "plan")),
		mk("beta", "sim", "s2", 0, EB, ed, decision.TermAccept, h, tt(same(1.0), "evidence")),
		mk("beta", "sim", "s3", 0, IT, hc, decision.TermReject, same(0.4), tt(same(0.1), "commitment")),
		mk("beta", "sim", "s4", 0, IT, ed, decision.TermPending, h, tt(h), tt(h), tt(same(u))),
		mk("beta", "sim", "s5", 0, EB, hc, decision.TermFailed, h, tt(same(0.9), "evidence")),
	}
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

// The CLI tests load the hand-built run from testdata; keep the file equal
// to the Go fixture (go test ./analysis -update rewrites it).
func TestFixtureFile(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, ep := range handBuilt() {
		if err := enc.Encode(ep); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", "handbuilt.jsonl")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("%s differs from handBuilt(); rerun with -update", path)
	}
}
