// Package flagbound declares numeric command-line flags that carry their
// allowed range: a value outside it, or one that is not a number of the
// flag's kind, is refused while the command line is parsed, before any
// work starts, with a one-line error naming the flag and the range
// (pflag adds the flag: `invalid argument "-1" for "--tmax" flag: want an
// integer in 1..1000`). Every numeric flag of persuarena is declared here
// (cmd/persuarena's TestNumericFlagsBounded walks them all).
package flagbound

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Value is a bounded flag value.
type Value interface {
	pflag.Value
	// Range is the allowed range as the error and the help show it,
	// "LO..HI".
	Range() string
	// In reports whether the flag's current value is in its range.
	In() bool
}

// usage appends the range to a flag's help text.
func usage(u, rng string) string { return u + " (" + rng + ")" }

// intValue is an int in [lo, hi].
type intValue struct {
	p      *int
	lo, hi int
}

// Int declares an int flag name with default def, bounded to [lo, hi].
// It panics when def is outside the range (a programming error).
func Int(f *pflag.FlagSet, p *int, name string, def, lo, hi int, help string) {
	if def < lo || def > hi {
		panic(fmt.Sprintf("flagbound: --%s default %d outside %d..%d", name, def, lo, hi))
	}
	*p = def
	v := &intValue{p, lo, hi}
	f.Var(v, name, usage(help, v.Range()))
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "int" }
func (v *intValue) Range() string  { return fmt.Sprintf("%d..%d", v.lo, v.hi) }
func (v *intValue) In() bool       { return *v.p >= v.lo && *v.p <= v.hi }
func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < int64(v.lo) || n > int64(v.hi) {
		return fmt.Errorf("want an integer in %s", v.Range())
	}
	*v.p = int(n)
	return nil
}

// uintValue is a uint64 in [lo, hi].
type uintValue struct {
	p      *uint64
	lo, hi uint64
}

// Uint64 declares a uint64 flag name with default def, bounded to [lo,
// hi] (a seed takes 0..math.MaxUint64). It panics when def is outside.
func Uint64(f *pflag.FlagSet, p *uint64, name string, def, lo, hi uint64, help string) {
	if def < lo || def > hi {
		panic(fmt.Sprintf("flagbound: --%s default %d outside %d..%d", name, def, lo, hi))
	}
	*p = def
	v := &uintValue{p, lo, hi}
	f.Var(v, name, usage(help, v.Range()))
}

func (v *uintValue) String() string { return strconv.FormatUint(*v.p, 10) }
func (v *uintValue) Type() string   { return "uint64" }
func (v *uintValue) Range() string  { return fmt.Sprintf("%d..%d", v.lo, v.hi) }
func (v *uintValue) In() bool       { return *v.p >= v.lo && *v.p <= v.hi }
func (v *uintValue) Set(s string) error {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil || n < v.lo || n > v.hi {
		return fmt.Errorf("want an integer in %s", v.Range())
	}
	*v.p = n
	return nil
}

// floatValue is a finite float64 in [lo, hi].
type floatValue struct {
	p      *float64
	lo, hi float64
}

// Float declares a float64 flag name with default def, bounded to [lo,
// hi]; NaN and infinities are refused. It panics when def is outside.
func Float(f *pflag.FlagSet, p *float64, name string, def, lo, hi float64, help string) {
	if !(def >= lo && def <= hi) {
		panic(fmt.Sprintf("flagbound: --%s default %g outside %g..%g", name, def, lo, hi))
	}
	*p = def
	v := &floatValue{p, lo, hi}
	f.Var(v, name, usage(help, v.Range()))
}

func (v *floatValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v *floatValue) Type() string   { return "float64" }
func (v *floatValue) Range() string  { return fmt.Sprintf("%g..%g", v.lo, v.hi) }
func (v *floatValue) In() bool       { return *v.p >= v.lo && *v.p <= v.hi }
func (v *floatValue) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < v.lo || x > v.hi {
		return fmt.Errorf("want a number in %s", v.Range())
	}
	*v.p = x
	return nil
}

// durationValue is a time.Duration in [lo, hi].
type durationValue struct {
	p      *time.Duration
	lo, hi time.Duration
}

// Duration declares a duration flag name (time.ParseDuration's form,
// e.g. 30s, 5m) with default def, bounded to [lo, hi]. It panics when def
// is outside.
func Duration(f *pflag.FlagSet, p *time.Duration, name string, def, lo, hi time.Duration, help string) {
	if def < lo || def > hi {
		panic(fmt.Sprintf("flagbound: --%s default %v outside %v..%v", name, def, lo, hi))
	}
	*p = def
	v := &durationValue{p, lo, hi}
	f.Var(v, name, usage(help, v.Range()))
}

func (v *durationValue) String() string { return v.p.String() }
func (v *durationValue) Type() string   { return "duration" }
func (v *durationValue) Range() string  { return fmt.Sprintf("%v..%v", v.lo, v.hi) }
func (v *durationValue) In() bool       { return *v.p >= v.lo && *v.p <= v.hi }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < v.lo || d > v.hi {
		return fmt.Errorf("want a duration in %s", v.Range())
	}
	*v.p = d
	return nil
}

// uintsValue is a list of uint64s, each in [lo, hi], at most max of them.
type uintsValue struct {
	p      *[]uint64
	lo, hi uint64
	max    int
	set    bool
}

// Uint64s declares a comma-separated list flag of uint64s (repeatable:
// each use adds to the list, the first replaces the default), each in
// [lo, hi] and at most max in all. It panics when def breaks the bounds.
func Uint64s(f *pflag.FlagSet, p *[]uint64, name string, def []uint64, lo, hi uint64, max int, help string) {
	*p = append([]uint64(nil), def...)
	v := &uintsValue{p: p, lo: lo, hi: hi, max: max}
	if !v.In() {
		panic(fmt.Sprintf("flagbound: --%s default %v outside %s", name, def, v.Range()))
	}
	f.Var(v, name, usage(help, v.Range()))
}

func (v *uintsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, n := range *v.p {
		parts[i] = strconv.FormatUint(n, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
func (v *uintsValue) Type() string { return "uint64Slice" }
func (v *uintsValue) Range() string {
	return fmt.Sprintf("%d..%d, at most %d values", v.lo, v.hi, v.max)
}
func (v *uintsValue) In() bool {
	if len(*v.p) > v.max {
		return false
	}
	for _, n := range *v.p {
		if n < v.lo || n > v.hi {
			return false
		}
	}
	return true
}
func (v *uintsValue) Set(s string) error {
	var out []uint64
	if v.set {
		out = append(out, *v.p...)
	}
	for _, part := range strings.Split(strings.Trim(s, "[]"), ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 0, 64)
		if err != nil || n < v.lo || n > v.hi || len(out) >= v.max {
			return fmt.Errorf("want integers in %s", v.Range())
		}
		out = append(out, n)
	}
	*v.p, v.set = out, true
	return nil
}
