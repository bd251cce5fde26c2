package llm_test

import (
	"testing"
	"time"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

// An attempt the engine holds far past the endpoint's usual latency is
// hedged: the duplicate answers and the request returns long before the
// held answer, the duplicate counted by Client.Hedges and not in the
// request's Usage (which must not depend on timing); the hedges are
// budgeted at one per 10 attempts, so with the budget spent a held attempt
// is waited for.
func TestHedgedAttempt(t *testing.T) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(yesHandler), fakeengine.WithLatency(5*time.Millisecond))
	defer srv.Close()
	c, err := llm.NewClient(srv.Backend("b"))
	if err != nil {
		t.Fatal(err)
	}
	req := llm.ChatRequest{Messages: msgs}
	for range 20 { // latencies for the hedge delay, and 2 hedges earned
		if _, err := c.Chat(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		srv.Fail(fakeengine.Fault{Delay: 20 * time.Second})
		t0 := time.Now()
		r, err := c.Chat(ctx, req)
		if err != nil || r.Usage.Requests != 1 || c.Hedges() != i+1 || time.Since(t0) > 10*time.Second {
			t.Fatalf("held attempt %d: %v, %+v, %d hedges after %v (want the hedge's answer, 1 request in Usage)", i, err, r, c.Hedges(), time.Since(t0))
		}
	}
	if got := srv.Stats().Total; got != 24 {
		t.Fatalf("%d requests at the engine, want 24 (20 + 2 x 2)", got)
	}
	// 22 attempts earned 2.2 hedges, 2 are spent: with the next attempt's
	// 0.1, 0.3 of a hedge is left, and a held attempt is waited for.
	srv.Fail(fakeengine.Fault{Delay: 300 * time.Millisecond})
	r, err := c.Chat(ctx, req)
	if err != nil || r.Usage.Requests != 1 || c.Hedges() != 2 {
		t.Fatalf("over the budget: %v, %+v, %d hedges (want 1 request, no hedge)", err, r, c.Hedges())
	}
}
