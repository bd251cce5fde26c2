package llm_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

func threeReplicas(t *testing.T, b func(*llm.Backend)) ([]*fakeengine.Server, *llm.Client) {
	t.Helper()
	var srvs []*fakeengine.Server
	var urls []string
	for range 3 {
		s := fakeengine.New(llm.VLLM, fakeengine.WithLatency(5*time.Millisecond))
		t.Cleanup(s.Close)
		srvs = append(srvs, s)
		urls = append(urls, s.URL)
	}
	bk := srvs[0].Backend("fleet")
	bk.BaseURL, bk.BaseURLs = "", urls
	b(&bk)
	c, err := llm.NewClient(bk, llm.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	return srvs, c
}

func hi(ctx context.Context, c *llm.Client) error {
	_, err := c.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	return err
}

// New affinities skip a replica whose circuit is open; an affinity pinned
// to it moves to the least-loaded healthy replica and stays there.
func TestAffinitySkipsOpenCircuit(t *testing.T) {
	srvs, c := threeReplicas(t, func(b *llm.Backend) { b.BreakerFailures, b.MaxRetries = 1, -1 })
	ctx := context.Background()
	a0 := c.Affinity()
	if a0.Replica() != 0 {
		t.Fatalf("first affinity on replica %d, want 0", a0.Replica())
	}
	srvs[0].Fail(fakeengine.Fault{Status: 500})
	if err := hi(llm.WithAffinity(ctx, a0), c); err == nil {
		t.Fatal("the 500 must fail the request (no retries)")
	}
	if st := c.ReplicaStates(); !slices.Equal(st, []string{"open", "closed", "closed"}) {
		t.Fatalf("states %v", st)
	}
	// Moved at once off the open circuit, to replica 1 (loads 0, 0: lowest
	// index).
	if a0.Replica() != 1 || a0.Moves() != 1 {
		t.Fatalf("affinity on replica %d after %d moves, want 1 after 1", a0.Replica(), a0.Moves())
	}
	// New affinities skip replica 0: loads (replica 1 holds nothing: a0
	// has sent its first request) give 1, then 2, then 1.
	var got []int
	for range 3 {
		got = append(got, c.Affinity().Replica())
	}
	if !slices.Equal(got, []int{1, 2, 1}) {
		t.Fatalf("new affinities on %v, want [1 2 1]", got)
	}
	before := srvs[1].Stats().Total
	for range 3 {
		if err := hi(llm.WithAffinity(ctx, a0), c); err != nil {
			t.Fatal(err)
		}
	}
	if n := srvs[1].Stats().Total - before; n != 3 {
		t.Fatalf("replica 1 served %d of the moved affinity's 3 requests", n)
	}
}

// Without an affinity each request goes to the least-loaded healthy
// replica, and MaxInFlight caps each replica separately.
func TestReplicasInFlightCap(t *testing.T) {
	srvs, c := threeReplicas(t, func(b *llm.Backend) { b.MaxInFlight = 1 })
	var wg sync.WaitGroup
	for range 9 {
		wg.Go(func() {
			if err := hi(context.Background(), c); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	total := 0
	for i, s := range srvs {
		st := s.Stats()
		if st.MaxConcurrent > 1 {
			t.Errorf("replica %d: %d requests at once, want the cap 1", i, st.MaxConcurrent)
		}
		total += st.Total
	}
	if total != 9 {
		t.Errorf("%d requests served, want 9", total)
	}
}
