package server

import (
	"os"
	"runtime"
	"runtime/debug"
)

// SessionMemory is the memory, in bytes, one session may hold against the
// built-in simulator with persuader messages of at most maxMessageBytes:
// its episode and transcript, the reader's content-word sets of its
// earlier messages and the analysis of its latest long one (about 30
// times its text). BenchmarkSessionMemory measures 40 KiB after 10 steps
// of 60-byte messages and 0.87 MiB after 10 steps of 16 KiB ones
// (docs/server.md, "Memory"); SessionMemory is 64 KiB plus 56 bytes per
// byte of the limit, 0.94 MiB at the default 16 KiB.
func SessionMemory(maxMessageBytes int) int64 {
	return 64<<10 + 56*int64(max(maxMessageBytes, 0))
}

// LimitMemory sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to 1.5 times the memory the process holds now,
// at rest, plus SessionMemory(maxMessageBytes) for each of maxSessions,
// and returns it in bytes; it sets nothing and returns 0 when GOMEMLIMIT
// is set (the user's limit stands). Call it once the server is built and
// before it serves.
//
// Choice: the garbage collector's default pacing lets the heap reach
// twice its live size and returns freed memory to the system slowly, so
// under a burst of large messages (the abuse drill) the process held
// 2.7 times its memory at rest; with the limit it collects sooner as it
// nears it instead, spending more CPU only under such load. The limit is
// soft: sessions that need more get it, at the cost of more frequent
// collections.
func LimitMemory(maxSessions, maxMessageBytes int) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	debug.FreeOSMemory() // at rest: start-up's garbage collected and returned
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rest := int64(ms.Sys - ms.HeapReleased)
	limit := rest*3/2 + int64(max(maxSessions, 0))*SessionMemory(maxMessageBytes)
	debug.SetMemoryLimit(limit)
	return limit
}
