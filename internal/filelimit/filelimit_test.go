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
	// A device that never ends stops at the limit.
	if _, err := ReadFile("/dev/zero", 1<<10); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/dev/zero") {
		t.Fatalf("/dev/zero: %v", err)
	}
}
