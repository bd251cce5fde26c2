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

// bounded is a flag value of kind k in [lo, hi].
type bounded[T int | uint64 | float64 | time.Duration] struct {
	p      *T
	lo, hi T
	k      kind[T]
}

// kind is how a bounded value of T reads and shows.
type kind[T any] struct {
	typ    string // pflag's type name, shown by help
	noun   string // what the error asks for: "an integer", ...
	parse  func(string) (T, error)
	format func(T) string
}

var (
	intKind = kind[int]{"int", "an integer",
		func(s string) (int, error) {
			n, err := strconv.ParseInt(s, 0, 64)
			return int(n), rangeErr(err, n == int64(int(n)))
		},
		strconv.Itoa}
	uintKind = kind[uint64]{"uint64", "an integer",
		func(s string) (uint64, error) { return strconv.ParseUint(s, 0, 64) },
		func(n uint64) string { return strconv.FormatUint(n, 10) }}
	// NaN is refused: it is in no range.
	floatKind = kind[float64]{"float64", "a number",
		func(s string) (float64, error) {
			x, err := strconv.ParseFloat(s, 64)
			return x, rangeErr(err, !math.IsNaN(x))
		},
		func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }}
	durationKind = kind[time.Duration]{"duration", "a duration", time.ParseDuration, time.Duration.String}
)

// rangeErr is err, or an error when ok is false.
func rangeErr(err error, ok bool) error {
	if err == nil && !ok {
		return strconv.ErrRange
	}
	return err
}

// declare sets *p to def and declares flag name on f, bounded to [lo, hi].
// It panics when def is outside the range (a programming error).
func declare[T int | uint64 | float64 | time.Duration](f *pflag.FlagSet, p *T, name string, def, lo, hi T, help string, k kind[T]) {
	v := &bounded[T]{p, lo, hi, k}
	if !(def >= lo && def <= hi) {
		panic(fmt.Sprintf("flagbound: --%s default %s outside %s", name, k.format(def), v.Range()))
	}
	*p = def
	f.Var(v, name, usage(help, v.Range()))
}

func (v *bounded[T]) String() string { return v.k.format(*v.p) }
func (v *bounded[T]) Type() string   { return v.k.typ }
func (v *bounded[T]) Range() string  { return v.k.format(v.lo) + ".." + v.k.format(v.hi) }
func (v *bounded[T]) In() bool       { return *v.p >= v.lo && *v.p <= v.hi }
func (v *bounded[T]) Set(s string) error {
	x, err := v.k.parse(s)
	if err != nil || !(x >= v.lo && x <= v.hi) {
		return fmt.Errorf("want %s in %s", v.k.noun, v.Range())
	}
	*v.p = x
	return nil
}

// Int declares an int flag name with default def, bounded to [lo, hi].
// It panics when def is outside the range (a programming error).
func Int(f *pflag.FlagSet, p *int, name string, def, lo, hi int, help string) {
	declare(f, p, name, def, lo, hi, help, intKind)
}

// Uint64 declares a uint64 flag name with default def, bounded to [lo,
// hi] (a seed takes 0..math.MaxUint64). It panics when def is outside.
func Uint64(f *pflag.FlagSet, p *uint64, name string, def, lo, hi uint64, help string) {
	declare(f, p, name, def, lo, hi, help, uintKind)
}

// Float declares a float64 flag name with default def, bounded to [lo,
// hi]; NaN and infinities are refused. It panics when def is outside.
func Float(f *pflag.FlagSet, p *float64, name string, def, lo, hi float64, help string) {
	declare(f, p, name, def, lo, hi, help, floatKind)
}

// Duration declares a duration flag name (time.ParseDuration's form,
// e.g. 30s, 5m) with default def, bounded to [lo, hi]. It panics when def
// is outside.
func Duration(f *pflag.FlagSet, p *time.Duration, name string, def, lo, hi time.Duration, help string) {
	declare(f, p, name, def, lo, hi, help, durationKind)
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
