package llmagent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// TestRoleError checks that engine sentinels match the dialogue's and
// nothing else does.
func TestRoleError(t *testing.T) {
	if EngineError(nil) != nil {
		t.Fatal("EngineError(nil) != nil")
	}
	long := EngineError(fmt.Errorf("backend %q: %w", "x", llm.ErrContextLength))
	if !errors.Is(long, episode.ErrTruncated) || !errors.Is(long, llm.ErrContextLength) || errors.Is(long, episode.ErrTransient) {
		t.Errorf("context-length error: truncated %v transient %v", errors.Is(long, episode.ErrTruncated), errors.Is(long, episode.ErrTransient))
	}
	if long.Error() != `backend "x": llm: prompt exceeds the model's context window` {
		t.Errorf("message changed: %q", long.Error())
	}
	flaky := EngineError(fmt.Errorf("chat: %w", llm.ErrTransient))
	if !errors.Is(flaky, episode.ErrTransient) || errors.Is(flaky, episode.ErrTruncated) {
		t.Error("transient error does not match episode.ErrTransient alone")
	}
	other := EngineError(llm.ErrMalformed)
	if errors.Is(other, episode.ErrTransient) || errors.Is(other, episode.ErrTruncated) || !errors.Is(other, llm.ErrMalformed) {
		t.Error("malformed error matches a dialogue sentinel")
	}
	if r, ok := other.(interface{ RetryAfter() time.Duration }); !ok || r.RetryAfter() != 0 {
		t.Error("RetryAfter of a non-transient error should be 0")
	}
}
