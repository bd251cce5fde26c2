//go:build unix

package filelimit

import "syscall"

// openNonblock makes opening a named pipe return at once instead of
// waiting for a writer (regular files ignore it).
const openNonblock = syscall.O_NONBLOCK
