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

func TestIntervalJSONFloat(t *testing.T) {
	if got := Interval(-0.1234, 0.3, 2); got != "[-0.12, +0.30]" {
		t.Errorf("Interval = %q", got)
	}
	if JSONFloat(math.NaN()) != nil || JSONFloat(math.Inf(-1)) != nil || JSONFloat(0.5) != 0.5 {
		t.Error("JSONFloat")
	}
}
