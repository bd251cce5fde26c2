package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/internal/flagbound"
)

// numericTypes are the pflag value types that hold numbers.
var numericTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "duration": true, "count": true,
	"intSlice": true, "int32Slice": true, "int64Slice": true, "uintSlice": true,
	"float32Slice": true, "float64Slice": true, "durationSlice": true, "uint64Slice": true,
}

// eachCommand calls fn for cmd and every command below it.
func eachCommand(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		eachCommand(c, fn)
	}
}

// The generated bounds test: every numeric flag of every command is a
// flagbound value, and each of 0, -1, 2^31, 2^63-1 and a non-number is
// either taken inside the flag's range or refused while the command line
// is parsed (before the command runs) with one line naming the flag and
// its range. Before, --masp-t 2000000000 ran every episode and then
// failed out of memory, train --g 2^63-1 panicked, serve took
// --step-budget -1s and 2^63-1 sessions.
func TestNumericFlagsBounded(t *testing.T) {
	values := []string{"0", "-1", "2147483648", "9223372036854775807", "x"}
	flags, refused := 0, 0
	// One tree is walked and its values set and restored; each refused
	// value is then given on a command line to a fresh tree, as main
	// would run it.
	eachCommand(newRootCmd(), func(cmd *cobra.Command) {
		path := strings.Fields(cmd.CommandPath())[1:]
		cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if !numericTypes[fl.Value.Type()] {
				return
			}
			name := strings.Join(append(path, "--"+fl.Name), " ")
			bv, ok := fl.Value.(flagbound.Value)
			if !ok {
				t.Errorf("%s: a %s flag not declared with flagbound (no range)", name, fl.Value.Type())
				return
			}
			flags++
			if !bv.In() {
				t.Errorf("%s: default %s outside %s", name, fl.Value.String(), bv.Range())
			}
			for _, v := range values {
				old := fl.Value.String()
				if err := fl.Value.Set(v); err == nil {
					if !bv.In() {
						t.Errorf("%s %s: taken, but outside %s", name, v, bv.Range())
					}
					if err := fl.Value.Set(old); err != nil {
						t.Fatalf("%s: restoring %s: %v", name, old, err)
					}
					continue
				}
				refused++
				// Refused: the command line with it fails at parse time.
				root := newRootCmd()
				sub, _, err := root.Find(path)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				given := sub.LocalFlags().Lookup(fl.Name)
				if given == nil {
					t.Fatalf("%s: not on a fresh tree", name)
				}
				before := given.Value.String()
				root.SetArgs(append(append([]string{}, path...), "--"+fl.Name, v))
				root.SetOut(io.Discard)
				root.SetErr(io.Discard)
				err = root.Execute()
				want := `invalid argument "` + v + `" for "--` + fl.Name + `" flag: `
				if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), bv.Range()) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s %s: %v, want one line %q... naming %s", name, v, err, want, bv.Range())
				}
				if given.Value.String() != before {
					t.Errorf("%s %s: refused but the value changed from %s to %s", name, v, before, given.Value.String())
				}
			}
		})
	})
	if flags < 90 || refused < 4*flags {
		t.Fatalf("walked %d numeric flags, %d refusals: the walk missed commands", flags, refused)
	}
	t.Logf("%d numeric flags, %d values refused at parse time", flags, refused)
}
