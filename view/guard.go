package view

import (
	"net"
	"net/http"
	"slices"
	"strings"
)

// maxPage bounds the page query parameter: a page past it is refused
// (400) before any arithmetic on it, so page=9223372036854775807 cannot
// overflow. A million pages of 50 hold 50 million episodes, five times the
// largest plan a run may have.
const maxPage = 1 << 20

// contentSecurityPolicy allows the viewer's own script and stylesheet
// and nothing else: no inline script, no framing, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secureHeaders sets the security headers every answer carries.
func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// HostGuard returns h answering only requests whose Host header is a
// loopback name (localhost, *.localhost), an IP address literal, or one
// of allow (host names, any case, without port); others get 421
// Misdirected Request. A DNS-rebinding page reaches the viewer under its
// own host name, which is none of these, so it cannot read transcripts or
// hidden profiles.
func HostGuard(h http.Handler, allow []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, allow) {
			secureHeaders(w.Header())
			http.Error(w, "host "+r.Host+" is not allowed: open the viewer as 127.0.0.1 or localhost, or start it with --allow-host NAME", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a Host header passes HostGuard.
func hostAllowed(host string, allow []string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return true
	}
	return slices.ContainsFunc(allow, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "."), host) })
}
