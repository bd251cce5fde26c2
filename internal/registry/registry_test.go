package registry

import (
	"slices"
	"testing"
)

func TestMap(t *testing.T) {
	r := New[int]("number")
	r.Register("b", 2)
	r.Register("a", 1)
	if v, ok := r.Lookup("b"); !ok || v != 2 {
		t.Errorf("Lookup(b) = %v, %v", v, ok)
	}
	if _, ok := r.Lookup("c"); ok {
		t.Error("Lookup(c) found a value")
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names = %v", got)
	}
	for _, name := range []string{"a", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			r.Register(name, 9)
		}()
	}
}
