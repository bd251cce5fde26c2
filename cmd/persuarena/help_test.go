package main

import (
	"bytes"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/internal/buildinfo"
)

// placeholder is a deliberate argument name in a flag's usage (`FILE`).
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Every command's help renders, and no flag shows a spurious argument
// name: pflag takes the first backquoted text of a usage string as the
// flag's argument name (`--enqueue persuarena worker`), so backquotes may
// only name a placeholder such as FILE, and never on a boolean flag.
func TestHelpArgumentNames(t *testing.T) {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var buf bytes.Buffer
		c.SetOut(&buf)
		c.SetErr(&buf)
		if err := c.Help(); err != nil {
			t.Errorf("%s --help: %v", c.CommandPath(), err)
		}
		c.SetOut(nil)
		c.SetErr(nil)
		if !strings.Contains(buf.String(), "Usage:") {
			t.Errorf("%s --help has no usage:\n%s", c.CommandPath(), buf.String())
		}
		check := func(f *pflag.Flag) {
			n++
			if !strings.Contains(f.Usage, "`") {
				return
			}
			name, _ := pflag.UnquoteUsage(f)
			if f.Value.Type() == "bool" || !placeholder.MatchString(name) {
				t.Errorf("%s --%s renders as %q: backquotes in its usage %q", c.CommandPath(), f.Name, "--"+f.Name+" "+name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.InheritedFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if n < 100 {
		t.Fatalf("only %d flags seen", n)
	}
}

// persuarena --version and persuarena version name the build.
func TestVersion(t *testing.T) {
	var out string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var err error
		if out, _, err = execRoot(t, args...); err != nil {
			t.Fatal(err)
		}
		first := strings.SplitN(out, "\n", 2)[0]
		if first != "persuarena "+buildinfo.Version() {
			t.Errorf("%v: first line %q, want %q", args, first, "persuarena "+buildinfo.Version())
		}
	}
	if !strings.Contains(out, "\ncommit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version:\n%s", out)
	}
}
