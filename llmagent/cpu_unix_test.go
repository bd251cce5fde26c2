//go:build unix

package llmagent

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) this process has used,
// its children excluded (the fake engine process of
// BenchmarkConcurrentEpisodes), and true.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
