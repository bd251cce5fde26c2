package main

import (
	"testing"

	"github.com/persuarena/persuarena/roles"
)

// mustRegistry is a role registry over the --config file config ("" for
// none).
func mustRegistry(t *testing.T, config string) *roles.Registry {
	t.Helper()
	r, err := roles.New(config)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
