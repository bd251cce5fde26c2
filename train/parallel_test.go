package train

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestParallelCallsEachOnceLowestError(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 16} {
		var calls [10]atomic.Int32
		err := Parallel(context.Background(), workers, 10, func(j int) error {
			calls[j].Add(1)
			if j == 7 || j == 4 {
				return fmt.Errorf("job %d", j)
			}
			return nil
		})
		if err == nil || err.Error() != "job 4" {
			t.Errorf("workers %d: err = %v, want job 4", workers, err)
		}
		for j := range calls {
			if c := calls[j].Load(); c != 1 {
				t.Errorf("workers %d: job %d called %d times, want 1", workers, j, c)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Parallel(ctx, 2, 3, func(int) error { return errors.New("x") }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}
