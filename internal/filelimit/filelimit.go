// Package filelimit reads input files under a size limit, so that a
// wrong path (/dev/zero, a multi-gigabyte log) fails with a clear error
// instead of exhausting memory.
package filelimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits of the inputs PersuArena reads whole (docs/scale.md, "Limits").
const (
	// Config bounds a persuarena.yaml (llm.LoadConfig).
	Config = 1 << 20
	// Probes bounds a probe basis file (probe.LoadBasis).
	Probes = 1 << 20
	// Spec bounds a reward spec or scenario pack (package reporeward) and a
	// simulator file (sim.LoadFile).
	Spec = 8 << 20
	// Memory bounds a strategy memory file (persuhmm.Load).
	Memory = 64 << 20
)

// ErrTooLarge is returned (wrapped) for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads path whole, at most limit bytes (> 0). A regular file
// larger than limit fails before it is read; any other file (a device, a
// pipe) is read up to limit+1 bytes and fails there. Errors: os.Open's
// and the read's, or ErrTooLarge naming the file and the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, over the limit of %d", path, ErrTooLarge, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w: over the limit of %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}
