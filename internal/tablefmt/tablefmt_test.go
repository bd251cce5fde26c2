package tablefmt

import (
	"math"
	"testing"
)

func TestPctNum(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Pct(0.4567), "45.7"},
		{Pct(1), "100.0"},
		{Pct(-0.0001), "0.0"},
		{Pct(math.NaN()), "-"},
		{Num(1.23456, 2, false), "1.23"},
		{Num(1.23456, 2, true), "+1.23"},
		{Num(-1.235, 1, true), "-1.2"},
		{Num(-0.0004, 3, false), "0.000"},
		{Num(-0.0004, 3, true), "+0.000"},
		{Num(0, 0, true), "+0"},
		{Num(math.NaN(), 2, true), "-"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
