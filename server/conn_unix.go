//go:build unix

package server

import "syscall"

// fdLimit returns the process's open-file limit (RLIMIT_NOFILE, soft),
// or 0 when unknown.
func fdLimit() int {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
		return 0
	}
	return int(min(r.Cur, 1<<30))
}
