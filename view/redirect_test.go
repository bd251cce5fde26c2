package view

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// /runs and /runs/ (where a user looks for the run list) redirect to /,
// the run list.
func TestRunsRedirectsHome(t *testing.T) {
	s := New(nil, "")
	for _, path := range []string{"/runs", "/runs/"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/" {
			t.Errorf("GET %s: status %d, Location %q; want 301 to /", path, rec.Code, rec.Header().Get("Location"))
		}
	}
}
