// Package parallel runs the calls of an index range on a bounded number
// of goroutines: the one worker pool of the evaluation, training, MASP,
// REPO-judging, fidelity-replay, simulator-fit and scenario-loading loops.
//
// Results land by index, so they never depend on the worker count or on
// scheduling (same seed, same transcript); only the order in which calls
// happen does, and callers that hand results on as they finish (eval's
// Sink) say so.
package parallel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// PanicError is the error of a call that panicked: the pool recovers it,
// so that the caller (a run's job) can record the failure before the
// process ends, instead of the panic killing the process with the run
// left running.
type PanicError struct {
	// Index is the call's index; Value what it panicked with; Stack the
	// goroutine's stack at the panic.
	Index int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("call %d panicked: %v\n%s", e.Index, e.Value, e.Stack)
}

// call runs fn(ctx, i), turning a panic into a *PanicError.
func call[R any](ctx context.Context, i int, fn func(ctx context.Context, i int) (R, error)) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Index: i, Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, i)
}

// Map calls fn(ctx, i) once for each i in [0, n), in increasing order of
// dispatch, on min(max(1, workers), n) goroutines (fn must be safe for
// that), waits for every call made, and returns the n results in index
// order.
//
// The ctx fn gets ends when the caller's ctx ends or a call fails; from
// then no further index is dispatched, though one handed to a worker at
// that moment still runs, with the ended ctx (the results of calls never
// made are R's zero value). A call that panics fails with a *PanicError.
// The error is that of the lowest index whose call failed,
// leaving out calls that failed only because an earlier failure cancelled
// their ctx (a context.Canceled after the pool cancelled it); with no call
// failed it is ctx.Err() (nil, or the caller's cancellation or deadline).
// As dispatch is in index order, every index below a failed one was
// called, so when calls fail only on their own input (not on a
// cancellation they observe), the error too is independent of scheduling.
func Map[R any](ctx context.Context, n, workers int, fn func(ctx context.Context, i int) (R, error)) ([]R, error) {
	out := make([]R, n)
	errs := make([]error, n)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		trigger = -1 // the call whose failure cancelled inner
	)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(max(1, workers), max(n, 1)) {
		wg.Go(func() {
			for i := range jobs {
				r, err := call(inner, i, fn)
				out[i], errs[i] = r, err
				if err != nil {
					mu.Lock()
					if trigger < 0 {
						trigger = i
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		// Checked before each send, not only in the select: with a worker
		// waiting, select would pick at random between send and Done.
		if inner.Err() != nil {
			break
		}
		select {
		case jobs <- i:
		case <-inner.Done():
		}
	}
	close(jobs)
	wg.Wait()
	for i, err := range errs {
		if err == nil || i != trigger && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			continue
		}
		return out, err
	}
	return out, ctx.Err()
}

// Each is Map for calls without a result: fn(ctx, i) for each i in
// [0, n) on at most workers goroutines, with Map's cancellation and
// error.
func Each(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	_, err := Map(ctx, n, workers, func(ctx context.Context, i int) (struct{}, error) {
		return struct{}{}, fn(ctx, i)
	})
	return err
}
