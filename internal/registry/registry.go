// Package registry is a table of named values that the packages providing
// them fill from their init functions, as database/sql's drivers register
// themselves: a lower package looks a method's contribution up by name
// without importing the method (docs/architecture.md).
package registry

import (
	"slices"
	"sync"
)

// Map holds values of type V by name; safe for concurrent use. The zero
// value is not usable: make one with New.
type Map[V any] struct {
	what string
	mu   sync.RWMutex
	m    map[string]V
}

// New returns an empty Map whose panics name what it holds (e.g.
// "scenario source").
func New[V any](what string) *Map[V] { return &Map[V]{what: what, m: map[string]V{}} }

// Register adds v under name. It panics when name is empty or already
// registered: a registration is a program's wiring, not input.
func (r *Map[V]) Register(name string, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic("registry: " + r.what + " registered with an empty name")
	}
	if _, dup := r.m[name]; dup {
		panic("registry: " + r.what + " " + name + " registered twice")
	}
	r.m[name] = v
}

// Lookup returns the value registered under name.
func (r *Map[V]) Lookup(name string) (V, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Map[V]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
