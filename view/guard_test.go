package view

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Every answer carries the CSP, X-Frame-Options DENY, nosniff and
// Referrer-Policy headers.
func TestSecurityHeaders(t *testing.T) {
	h, _, _ := newFixture(t)
	for _, path := range []string{"/", "/runs/" + runA, "/runs/nosuch", "/static/app.js", "/compare"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		hd := rec.Header()
		if hd.Get("Content-Security-Policy") != contentSecurityPolicy || hd.Get("X-Frame-Options") != "DENY" ||
			hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, hd)
		}
	}
}

// Only loopback names, IP literals and --allow-host names are answered:
// a DNS-rebinding page's own host name gets 421.
func TestHostAllowList(t *testing.T) {
	h, _, _ := newFixture(t)
	g := HostGuard(h, []string{"lab-box.example"})
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "app.localhost": 200,
		"192.168.1.5:8080": 200, "LAB-BOX.example:8080": 200,
		"attacker.example:8080": 421, "127.0.0.1.nip.io": 421, "": 421,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}

// Page numbers past the limit are refused, not overflowed.
func TestPageOverflowRefused(t *testing.T) {
	h, _, _ := newFixture(t)
	for _, path := range []string{
		"/runs/" + runBig + "?page=9223372036854775807",
		"/runs/" + runBig + "?page=4611686018427387904",
		"/compare?a=" + runA + "&b=" + runB + "&pa=script&pb=informer&persuadee=sim&page=9223372036854775807",
	} {
		if status, body := get(t, h, path); status != http.StatusBadRequest || !strings.Contains(body, "want a number in [1, 1048576]") {
			t.Errorf("%s: %d", path, status)
		}
	}
}

// FuzzQueryParameters: no query string panics a page or gets a 5xx.
func FuzzQueryParameters(f *testing.F) {
	for _, s := range []string{"page=9223372036854775807", "page=-1", "k=%00", "a=x&b=y&pa=&pb=&persuadee=sim&page=2",
		"persuader=script&terminal=accept&page=1", "scenario=%ff&rollout=99999999999999999999"} {
		f.Add(s)
	}
	h, _, _ := newFixture(f)
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return
		}
		for _, path := range []string{"/runs/" + runBig, "/runs/" + runA + "/episode", "/compare", "/compare/episode"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = raw
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s?%s: %d %s", path, raw, rec.Code, rec.Body.String())
			}
		}
	})
}
