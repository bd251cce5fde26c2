package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"7", 7 * time.Second}, {" 2 ", 2 * time.Second}, {"1.5", 1500 * time.Millisecond},
		{"0", 0}, {"-3", 0}, {"soon", 0},
		{now.Add(20 * time.Second).Format(http.TimeFormat), 20 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second},
		{"999999", 86400 * time.Second},
	}
	for _, c := range cases {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := &Client{b: Backend{MaxRetryWait: 60 * time.Second}}
	WithJitterSeed(42)(c)
	for try := 0; try < 12; try++ {
		ceil := min(backoffMax, backoffBase<<try)
		for range 50 {
			if d := c.backoff(try, 0); d < 0 || d > ceil {
				t.Fatalf("try %d: %v outside [0, %v]", try, d, ceil)
			}
		}
	}
	// Retry-After is a floor, capped by MaxRetryWait.
	if d := c.backoff(0, 7*time.Second); d != 7*time.Second {
		t.Fatalf("retry-after floor: %v", d)
	}
	if d := c.backoff(0, 10*time.Minute); d != 60*time.Second {
		t.Fatalf("retry-after cap: %v", d)
	}
	// Same seed, same jitter sequence.
	a, b := &Client{}, &Client{}
	WithJitterSeed(3)(a)
	WithJitterSeed(3)(b)
	for try := range 5 {
		if a.backoff(try, 0) != b.backoff(try, 0) {
			t.Fatal("jitter not reproducible for equal seeds")
		}
	}
}

// errRefused stands for a transport failure.
var errRefused = errors.New("dial tcp 127.0.0.1:9: connect: connection refused")

func TestBreakerStates(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &breaker{threshold: 3, cooldown: 30 * time.Second}
	for i := range 3 { // a fresh window whose first 3 attempts fail
		if _, err := b.allow(now); err != nil {
			t.Fatalf("closed breaker refused request %d", i)
		}
		b.failure(now, errRefused)
	}
	// Probes come 1 s after the circuit opens, then 1.5 times later at
	// each failed probe, at most the 30 s cooldown: 1, 1.5, 2.25, ... s.
	if _, err := b.allow(now.Add(999 * time.Millisecond)); !errors.Is(err, ErrCircuitOpen) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want open naming the last failure, got %v", err)
	}
	if b.state(now) != "open" {
		t.Fatal(b.state(now))
	}
	at := now
	for i, secs := range []float64{1, 1.5, 2.25, 3.375, 5.0625, 7.59375, 11.390625, 17.0859375, 25.62890625, 30, 30} {
		wait := time.Duration(secs * float64(time.Second))
		if _, err := b.allow(at.Add(wait - 2*time.Millisecond)); !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("probe %d before its wait %v: %v", i, wait, err)
		}
		at = at.Add(wait)
		probe, err := b.allow(at)
		if err != nil || !probe {
			t.Fatalf("want half-open probe %d after %v, got %v %v", i, wait, probe, err)
		}
		if _, err := b.allow(at); !errors.Is(err, ErrCircuitOpen) {
			t.Fatal("only one half-open probe at a time")
		}
		b.failure(at, errRefused) // probe failed: open again, for longer
	}
	probe, _ := b.allow(at.Add(30 * time.Second))
	b.success()
	if !probe || b.state(at.Add(30*time.Second)) != "closed" {
		t.Fatal("successful probe must close the circuit")
	}
	for range 3 { // opened again: the first probe comes after 1 s again
		b.failure(at, errRefused)
	}
	if b.wait(at) != time.Second {
		t.Fatalf("reopened after a close: wait %v, want 1s", b.wait(at))
	}
	off := &breaker{threshold: -1}
	for range 10 {
		off.failure(now, errRefused)
	}
	if _, err := off.allow(now); err != nil {
		t.Fatal("disabled breaker never opens")
	}
}

// The circuit trips on the failure rate over the last 20 attempts, not on
// a run of failures: 30 % failures never open it, and after 20 successes
// it opens at the 16th failure (16 of 20 = 80 %), not the 3rd in a row.
func TestBreakerTripsOnRate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &breaker{threshold: 3, cooldown: 30 * time.Second}
	b.success() // a success first: the window is not all failures
	for i := range 1000 {
		if i%10 == 0 || i%10 == 3 || i%10 == 6 || i%10 == 7 && i%20 == 7 {
			b.failure(now, errRefused) // 35 % of attempts, up to 4 in a row
		} else {
			b.success()
		}
		if b.state(now) != "closed" {
			t.Fatalf("opened at attempt %d under 35 %% failures", i)
		}
	}
	for range 20 {
		b.success()
	}
	for i := 1; i <= 16; i++ {
		b.failure(now, errRefused)
		if open := b.state(now) == "open"; open != (i == 16) {
			t.Fatalf("after %d failures: state %s", i, b.state(now))
		}
	}
	if _, err := b.allow(now); err == nil || !strings.Contains(err.Error(), "after 16 of the last 20 attempts failed") {
		t.Fatalf("open circuit message: %v", err)
	}
}

func TestLogprobValues(t *testing.T) {
	var v struct {
		A, B, C, D, E, F logprob
	}
	raw := `{"A": -0.5, "B": null, "C": "-inf", "D": "NaN", "E": -3.4e38, "F": "-1.25"}`
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != -0.5 || !math.IsInf(float64(v.B), -1) || !math.IsInf(float64(v.C), -1) || !math.IsInf(float64(v.D), -1) ||
		v.E != -3.4e38 || v.F != -1.25 {
		t.Fatalf("%+v", v)
	}
	in := `{"a":-Infinity,"b":"x -Infinity NaN \"NaN\"","c":[NaN,Infinity]}`
	want := `{"a":null,"b":"x -Infinity NaN \"NaN\"","c":[null,null]}`
	if got := string(sanitizeJSON([]byte(in))); got != want {
		t.Fatalf("sanitize:\n got %s\nwant %s", got, want)
	}
}

func TestErrorChains(t *testing.T) {
	he := &HTTPError{Status: 400, Body: "too long", Path: "/v1/chat/completions"}
	err := &CallError{Usage: Usage{Requests: 1}, Err: fmt.Errorf("backend %q: %w", "b", &attemptError{err: fmt.Errorf("%w: %w", ErrContextLength, he), status: 400})}
	var got *HTTPError
	if !errors.Is(err, ErrContextLength) || !errors.As(err, &got) || got.Status != 400 {
		t.Fatalf("chain broken: %v", err)
	}
	if UsageOf(err).Requests != 1 || UsageOf(errors.New("x")).Requests != 0 {
		t.Fatal("UsageOf")
	}
	if errors.Is(ErrLogprobsUnavailable, ErrContextLength) {
		t.Fatal("only context-length errors are truncations")
	}
}

func TestSecretFormatting(t *testing.T) {
	s := secret("sk-MARKER")
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		if got := fmt.Sprintf(f, s); got != "[redacted]" {
			t.Errorf("%s gives %q", f, got)
		}
	}
	b, _ := json.Marshal(struct{ K secret }{s})
	if string(b) != `{"K":"[redacted]"}` {
		t.Errorf("json %s", b)
	}
}

func TestSmallerMax(t *testing.T) {
	cases := []struct {
		body string
		k    int
		want int
	}{
		{"Requested sample logprobs of 20, which is greater than max allowed: 8", 20, 8},
		{"Invalid 'logprobs': integer above maximum value. Expected a value <= 5, but got 20 instead.", 20, 5},
		{"top_logprobs must be between 0 and 20", 50, 20},
		{"max allowed: 30", 20, 0},
		{"bad field", 20, 0},
	}
	for _, c := range cases {
		if got := smallerMax(c.body, c.k); got != c.want {
			t.Errorf("smallerMax(%q, %d) = %d, want %d", c.body, c.k, got, c.want)
		}
	}
}
