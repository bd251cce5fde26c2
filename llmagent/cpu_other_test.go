//go:build !unix

package llmagent

import "time"

// processCPU is unavailable here: the CPU metric is not reported.
func processCPU() (time.Duration, bool) { return 0, false }
