package llmagent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// replicaLog records, per fake engine replica, which episode's requests it
// served: persuadee requests by the "persona-K" marker of the hidden
// profile, persuader requests by the "plan-K" marker of the proposal.
type replicaLog struct {
	mu   sync.Mutex
	seen [][]string // replica -> markers in arrival order
}

var (
	personaRE = regexp.MustCompile(`persona-\d+`)
	planRE    = regexp.MustCompile(`plan-\d+`)
)

func (l *replicaLog) handler(i int) fakeengine.Handler {
	return func(r fakeengine.Request) fakeengine.Reply {
		text := r.Prompt
		for _, m := range r.Messages {
			text += m.Content
		}
		key := personaRE.FindString(text)
		if key == "" {
			key = planRE.FindString(text)
		}
		if key != "" {
			l.mu.Lock()
			l.seen[i] = append(l.seen[i], key)
			l.mu.Unlock()
		}
		return persuadeeHandler(r)
	}
}

// replicasOf returns the replicas that served marker, in index order.
func (l *replicaLog) replicasOf(marker string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for i, s := range l.seen {
		if slices.Contains(s, marker) {
			out = append(out, i)
		}
	}
	return out
}

// replicaRig is three fake vLLM replicas behind one llm.Client, with
// instant retries.
func replicaRig(t *testing.T) ([]*fakeengine.Server, *llm.Client, *replicaLog) {
	t.Helper()
	log := &replicaLog{seen: make([][]string, 3)}
	var srvs []*fakeengine.Server
	var urls []string
	for i := range 3 {
		s := fakeengine.New(llm.VLLM, fakeengine.WithHandler(log.handler(i)), fakeengine.WithLatency(2*time.Millisecond))
		t.Cleanup(s.Close)
		srvs = append(srvs, s)
		urls = append(urls, s.URL)
	}
	b := srvs[0].Backend("fleet")
	b.BaseURL, b.BaseURLs = "", urls
	c, err := llm.NewClient(b, llm.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	return srvs, c, log
}

func replicaScenario(k int) *scenario.Scenario {
	sc := testScenario()
	sc.ID = fmt.Sprintf("r%d", k)
	sc.Proposal = fmt.Sprintf("Join a weekly walking group for a month (plan-%d).", k)
	sc.Hidden.Persona = fmt.Sprintf("A shy accountant, persona-%d", k)
	return sc
}

// replicaEpisodes starts n episodes in order (persuadee sessions first,
// then persuader sessions) and plays turns rounds of persuader utterance,
// persuadee reply and probe read-out, the episodes of one round
// concurrently; between rounds it calls between(round). It returns each
// episode's error.
func replicaEpisodes(t *testing.T, c *llm.Client, n, turns int, between func(round int)) []error {
	t.Helper()
	ctx := context.Background()
	pe := NewPersuadee("llm:fleet", c, llm.Role{}, PersuadeeOptions{})
	pr := NewPersuader("llm:fleet", c, llm.Role{})
	pes := make([]episode.PersuadeeSession, n)
	prs := make([]episode.PersuaderSession, n)
	for k := range n {
		s, err := pe.Start(ctx, replicaScenario(k), uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		pes[k] = s
	}
	for k := range n {
		s, err := pr.Start(ctx, replicaScenario(k).Public(), uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		prs[k] = s
	}
	trs := make([][]episode.Message, n)
	errs := make([]error, n)
	for round := range turns {
		var wg sync.WaitGroup
		for k := range n {
			if errs[k] != nil {
				continue
			}
			wg.Go(func() {
				u, err := prs[k].Say(ctx, trs[k])
				if err != nil {
					errs[k] = err
					return
				}
				trs[k] = append(trs[k], episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text})
				r, err := pes[k].Reply(ctx, trs[k])
				if err != nil {
					errs[k] = err
					return
				}
				trs[k] = append(trs[k], episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text})
				if _, err := pes[k].(episode.Prober).Probe(ctx, trs[k], probe.Default); err != nil {
					errs[k] = err
				}
			})
		}
		wg.Wait()
		if between != nil {
			between(round)
		}
	}
	return errs
}

// Episodes started in order spread least-loaded over three replicas
// (episode k's persuadee on replica k mod 3, and its persuader likewise),
// and every request of one session (replies, probe forks, utterances)
// reaches that one replica.
func TestReplicasStickyLeastLoaded(t *testing.T) {
	srvs, c, log := replicaRig(t)
	for k, err := range replicaEpisodes(t, c, 6, 3, nil) {
		if err != nil {
			t.Fatalf("episode %d: %v", k, err)
		}
	}
	for k := range 6 {
		for _, m := range []string{fmt.Sprintf("persona-%d", k), fmt.Sprintf("plan-%d", k)} {
			if got := log.replicasOf(m); !slices.Equal(got, []int{k % 3}) {
				t.Errorf("%s served by replicas %v, want [%d]", m, got, k%3)
			}
		}
	}
	// Two episodes per replica, each 3 rounds of one utterance, one reply
	// and one probe read-out (one completions request, the handler sees
	// each of its len(probe.Default) prompts); capability detection ran
	// before, on replica 0, without markers.
	want := 2 * 3 * (1 + 1 + len(probe.Default))
	for i, s := range srvs {
		if got := len(log.seen[i]); got != want {
			t.Errorf("replica %d served %d episode generations, want %d (%v)", i, got, want, s.Stats().Requests)
		}
	}
}

// A replica killed mid-run loses no episode: its sessions move to one
// other replica and finish there, the other sessions stay where they were.
func TestReplicaKilledMidRun(t *testing.T) {
	srvs, c, log := replicaRig(t)
	errs := replicaEpisodes(t, c, 6, 4, func(round int) {
		if round == 1 {
			srvs[1].Close()
		}
	})
	for k, err := range errs {
		if err != nil {
			t.Fatalf("episode %d lost: %v", k, err)
		}
	}
	for k := range 6 {
		for _, m := range []string{fmt.Sprintf("persona-%d", k), fmt.Sprintf("plan-%d", k)} {
			got := log.replicasOf(m)
			if k%3 != 1 {
				if !slices.Equal(got, []int{k % 3}) {
					t.Errorf("%s served by replicas %v, want [%d] only", m, got, k%3)
				}
				continue
			}
			// Moved: replica 1 before the kill, then exactly one other.
			if len(got) != 2 || got[0] == 1 && got[1] == 1 || !slices.Contains(got, 1) {
				t.Errorf("%s served by replicas %v, want 1 and one other", m, got)
			}
			// Rounds 0-1 on replica 1, rounds 2-3 all on the new replica:
			// per round one utterance, or one reply and len(probe.Default)
			// probe prompts.
			other := got[0]
			if other == 1 {
				other = got[1]
			}
			want := 2
			if strings.HasPrefix(m, "persona") {
				want = 2 * (1 + len(probe.Default))
			}
			if n := count(log, other, m); n != want {
				t.Errorf("%s: %d requests on replica %d after the move, want %d", m, n, other, want)
			}
		}
	}
	if st := c.ReplicaStates(); st[0] != "closed" || st[2] != "closed" {
		t.Errorf("replica states %v: the healthy replicas' circuits must stay closed", st)
	}
}

func count(l *replicaLog, replica int, marker string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.seen[replica] {
		if s == marker {
			n++
		}
	}
	return n
}
