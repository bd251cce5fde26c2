package llm_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

// Requests that meet an open circuit wait for it instead of failing: the
// first to arrive after the cooldown probes, a failed probe reopens it,
// and when a probe succeeds every waiter is answered. No request fails
// and the engine sees one probe per cooldown while the circuit is open.
func TestOpenCircuitWaitersResume(t *testing.T) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(yesHandler))
	defer srv.Close()
	b := srv.Backend("b")
	b.MaxRetries, b.BreakerFailures, b.BreakerCooldown = -1, 3, 150*time.Millisecond
	c, err := llm.NewClient(b)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hi"}}}
	srv.Fail(fakeengine.Fault{Status: 503}, fakeengine.Fault{Status: 503}, fakeengine.Fault{Status: 503})
	for range 3 {
		if _, err := c.Chat(ctx, req); err == nil {
			t.Fatal("want the 503")
		}
	}
	if c.BreakerState() != "open" {
		t.Fatalf("state %s, want open", c.BreakerState())
	}
	srv.Fail(fakeengine.Fault{Status: 500}) // the first probe fails
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Chat(ctx, req)
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	// The failed probe is one waiter's own attempt: it has no retries
	// (MaxRetries -1); the other 7 wait on and are answered.
	if failed != 1 || c.BreakerState() != "closed" {
		t.Fatalf("%d of 8 failed (%v), state %s; want 1 (the failed probe), closed", failed, errs, c.BreakerState())
	}
	if got := srv.Stats().Total; got != 3+8 {
		t.Fatalf("engine saw %d requests, want 11 (3 + one per waiter)", got)
	}
}

// A waiter on an engine that stays down fails, transient, once its own
// probe fails (it waited one cooldown, not the whole bound).
func TestOpenCircuitWaitBounded(t *testing.T) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(yesHandler), fakeengine.WithChaos(fakeengine.Chaos{P5xx: 1}))
	defer srv.Close()
	b := srv.Backend("b")
	b.MaxRetries, b.BreakerFailures, b.BreakerCooldown, b.Timeout = -1, 2, 50*time.Millisecond, 100*time.Millisecond
	c, err := llm.NewClient(b)
	if err != nil {
		t.Fatal(err)
	}
	req := llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hi"}}}
	for range 2 {
		c.Chat(context.Background(), req)
	}
	_, err = c.Chat(context.Background(), req)
	if !errors.Is(err, llm.ErrTransient) {
		t.Fatalf("want a transient failure after the bounded wait: %v", err)
	}
	if n := srv.Stats().Total - 2; n != 1 {
		t.Fatalf("%d probes while waiting, want 1", n)
	}
}
