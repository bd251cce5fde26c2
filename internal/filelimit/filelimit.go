// Package filelimit opens and reads input files under a size limit, and
// only regular files, so that a wrong path (/dev/zero, a named pipe no
// one writes to, a multi-gigabyte log) fails at once with a one-line
// error instead of blocking for ever or exhausting memory.
package filelimit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits of the inputs PersuArena reads (docs/scale.md, "Limits").
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
	// Scenarios bounds a JSONL scenario file (package scenario).
	//
	// Choice: 64 MiB, 14 times the largest shipped set (p4g.jsonl, 4.5
	// MiB, 1,017 scenarios with their dialogues): a set of about 15,000
	// such scenarios, which load in well under a minute, while a binary
	// or a log given by mistake fails at once.
	Scenarios = 64 << 20
	// Data bounds a data file read whole by an importer or trainer (a
	// dataset CSV or JSON, a checkpoint, a ratings file).
	//
	// Choice: 1 GiB, above the largest published data PersuArena imports
	// (the P4G and PersuasionTrace releases are under 100 MB) while still
	// refusing a device or a runaway log before it is read.
	Data = 1 << 30
)

// ErrTooLarge is returned (wrapped) for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned (wrapped) for a path that is not a regular
// file (a directory, a named pipe, a device, a socket), which could block
// a read for ever or never end.
var ErrNotRegular = errors.New("not a regular file")

// kind names a file mode for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a plain file"
}

// Check returns nil when path names a regular file (symbolic links
// followed) of at most limit bytes (> 0), without opening it. Errors:
// os.Stat's, ErrNotRegular or ErrTooLarge, each naming path in one line.
func Check(path string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi, limit)
}

func check(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s): give a file", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return fmt.Errorf("%s: %w: %d bytes, over the limit of %d", path, ErrTooLarge, fi.Size(), limit)
	}
	return nil
}

// File is an input file opened by Open: reads stop with ErrTooLarge past
// its limit.
type File struct {
	f     *os.File
	r     io.Reader
	path  string
	limit int64
	n     int64
}

// Read reads from the file, failing with ErrTooLarge once more than the
// limit has been read (the file grew after Open).
func (f *File) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.n > f.limit {
		return n, fmt.Errorf("%s: %w: over the limit of %d bytes", f.path, ErrTooLarge, f.limit)
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens path for reading if it is a regular file (symbolic links
// followed) of at most limit bytes (> 0). The check runs before the file
// is opened, and again on the open file, which is opened without blocking
// (a named pipe swapped in between is refused too, not waited on). Errors:
// os.Stat's and os.Open's, ErrNotRegular or ErrTooLarge, each naming path
// in one line.
func Open(path string, limit int64) (*File, error) {
	if err := Check(path, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(path, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, r: io.LimitReader(f, limit+1), path: path, limit: limit}, nil
}

// ReadFile reads path whole, a regular file of at most limit bytes (> 0;
// see Open). Errors: Open's and the read's, each naming path.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
