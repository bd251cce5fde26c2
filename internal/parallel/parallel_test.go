package parallel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

func TestMapOrderAndBound(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 16} {
		var running, peak atomic.Int32
		var calls [10]atomic.Int32
		got, err := Map(context.Background(), 10, workers, func(_ context.Context, i int) (int, error) {
			calls[i].Add(1)
			for r, p := running.Add(1), peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			defer running.Add(-1)
			return i * i, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i*i || calls[i].Load() != 1 {
				t.Errorf("workers %d: result %d = %d after %d calls, want %d after 1", workers, i, v, calls[i].Load(), i*i)
			}
		}
		if p := peak.Load(); p > int32(max(1, workers)) {
			t.Errorf("workers %d: %d calls at once", workers, p)
		}
	}
	if got, err := Map(context.Background(), 0, 4, func(context.Context, int) (int, error) { return 1, nil }); len(got) != 0 || err != nil {
		t.Errorf("n = 0: %v, %v", got, err)
	}
}

// The lowest failing index wins whatever the worker count; after a
// failure no further call starts.
func TestMapLowestErrorStopsDispatch(t *testing.T) {
	for _, workers := range []int{1, 3, 16} {
		var calls atomic.Int32
		err := Each(context.Background(), 10, workers, func(_ context.Context, i int) error {
			calls.Add(1)
			if i == 7 || i == 4 {
				return fmt.Errorf("job %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "job 4" {
			t.Errorf("workers %d: err = %v, want job 4", workers, err)
		}
		if workers == 1 && calls.Load() != 5 {
			t.Errorf("one worker: %d calls, want 5 (0 to 4, none after the failure)", calls.Load())
		}
	}
}

// A call that fails only because another failure cancelled its ctx does
// not hide that failure, though its index is lower.
func TestMapCancelledByFailure(t *testing.T) {
	boom := errors.New("boom")
	err := Each(context.Background(), 2, 2, func(ctx context.Context, i int) error {
		if i == 1 {
			return boom
		}
		<-ctx.Done()
		return fmt.Errorf("job 0: %w", ctx.Err())
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestMapCallerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := Each(ctx, 3, 2, func(context.Context, int) error { calls.Add(1); return errors.New("x") })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Errorf("cancelled before the start: err = %v after %d calls, want context.Canceled after 0", err, calls.Load())
	}
	ctx, cancel = context.WithCancel(context.Background())
	err = Each(ctx, 5, 1, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 1 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls.Load() != 2 {
		t.Errorf("cancelled by call 1: err = %v after %d calls, want context.Canceled after 2", err, calls.Load())
	}
}

// A call that panics fails its index with a *PanicError carrying the
// value and stack; the pool stops dispatching and the process lives on.
func TestPanicIsAnError(t *testing.T) {
	_, err := Map(context.Background(), 100, 4, func(_ context.Context, i int) (int, error) {
		if i == 7 {
			var m map[string]int
			m["x"] = 1 // assignment to entry in nil map
		}
		return i, nil
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Index != 7 || !strings.Contains(pe.Error(), "assignment to entry in nil map") ||
		!strings.Contains(string(pe.Stack), "parallel_test.go") {
		t.Fatalf("panic: %v", err)
	}
}
