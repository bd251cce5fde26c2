package filelimit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadFile(p, 4); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "5 bytes, over the limit of 4") {
		t.Fatalf("regular file over the limit: %v", err)
	}
}

// A file that grows past its limit after Open fails at the limit.
func TestOpenStopsAtLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("1234"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, []byte("123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := f.Read(buf)
	if n != 5 || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("read %d bytes, %v; want 5 (limit+1) and ErrTooLarge", n, err)
	}
}
