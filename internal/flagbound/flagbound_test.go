package flagbound

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Each kind refuses values outside its range and values of another kind
// at parse time, naming the flag and the range, and keeps the value it
// had; values inside are taken.
func TestBounds(t *testing.T) {
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var (
		n   int
		u   uint64
		x   float64
		d   time.Duration
		out strings.Builder
	)
	f.SetOutput(&out)
	Int(f, &n, "tmax", 10, 1, 1000, "turns")
	Uint64(f, &u, "seed", 1, 0, math.MaxUint64, "seed")
	Float(f, &x, "lr", 0.01, 1e-9, 1, "learning rate")
	Duration(f, &d, "lease", 30*time.Second, time.Second, time.Hour, "lease")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tmax", "0"}, `invalid argument "0" for "--tmax" flag: want an integer in 1..1000`},
		{[]string{"--tmax", "-1"}, `invalid argument "-1" for "--tmax" flag: want an integer in 1..1000`},
		{[]string{"--tmax", "2147483648"}, `want an integer in 1..1000`},
		{[]string{"--tmax", "9223372036854775807"}, `want an integer in 1..1000`},
		{[]string{"--tmax", "99999999999999999999"}, `want an integer in 1..1000`},
		{[]string{"--tmax", "x"}, `want an integer in 1..1000`},
		{[]string{"--seed", "-1"}, `invalid argument "-1" for "--seed" flag: want an integer in 0..18446744073709551615`},
		{[]string{"--lr", "0"}, `invalid argument "0" for "--lr" flag: want a number in 1e-09..1`},
		{[]string{"--lr", "NaN"}, `want a number in 1e-09..1`},
		{[]string{"--lr", "+Inf"}, `want a number in 1e-09..1`},
		{[]string{"--lease", "-1s"}, `invalid argument "-1s" for "--lease" flag: want a duration in 1s..1h0m0s`},
		{[]string{"--lease", "9223372036854775807"}, `want a duration in 1s..1h0m0s`},
	} {
		err := f.Parse(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if n != 10 || u != 1 || x != 0.01 || d != 30*time.Second {
		t.Fatalf("refused values changed the flags: %d %d %g %v", n, u, x, d)
	}
	if err := f.Parse([]string{"--tmax", "1000", "--seed", "18446744073709551615", "--lr", "1", "--lease", "1h"}); err != nil {
		t.Fatal(err)
	}
	if n != 1000 || u != math.MaxUint64 || x != 1 || d != time.Hour {
		t.Fatalf("in-range values: %d %d %g %v", n, u, x, d)
	}
	if h := f.Lookup("tmax").Usage; h != "turns (1..1000)" {
		t.Fatalf("help %q", h)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a default outside the range must panic")
		}
	}()
	Int(f, &n, "bad", 0, 1, 2, "")
}
