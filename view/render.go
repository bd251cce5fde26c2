package view

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/persuarena/persuarena/stats"
)

// pageNames are the page templates under assets/, each rendered inside
// assets/base.html.
var pageNames = []string{"runs", "run", "episode", "compare", "pair", "error"}

var funcs = template.FuncMap{
	"pct":  pct,
	"f3":   f3,
	"sf3":  sf3,
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
}

func parsePages() map[string]*template.Template {
	base := template.Must(template.New("base.html").Funcs(funcs).ParseFS(assets, "assets/base.html"))
	out := map[string]*template.Template{}
	for _, n := range pageNames {
		out[n] = template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/"+n+".html"))
	}
	return out
}

// head is what base.html reads of every page.
type head struct {
	Title string
	DB    string
	// Refresh reloads the page after that many seconds (0: never), for
	// pages showing a running run.
	Refresh int
}

// render writes page name with data, or a 500 naming the template error.
// Rendering goes to a buffer first, so a failing template sends no half
// page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "base.html", data); err != nil {
		http.Error(w, "view: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}

// errorPage is the error template's data.
type errorPage struct {
	head
	Status  int
	Message string
}

// fail renders an error page with status and message.
func (s *Server) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.render(w, status, "error", errorPage{head{Title: http.StatusText(status), DB: s.dbPath}, status, msg})
}

// pct formats a share in [0, 1] as a percentage with one decimal; NaN is "-".
func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// f3 formats *float64 with three decimals; nil is "-".
func f3(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

// sf3 is f3 with a sign.
func sf3(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%+.3f", *p)
}

// share is k of n as a percentage with its Wilson 95% interval
// (stats.Wilson), "-" when n is 0.
type share struct {
	K, N   int
	Text   string
	Lo, Hi float64
}

func newShare(k, n int) share {
	sh := share{K: k, N: n, Text: "-"}
	if n > 0 {
		sh.Lo, sh.Hi = stats.Wilson(k, n, stats.Z95)
		sh.Text = fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*float64(k)/float64(n), 100*sh.Lo, 100*sh.Hi)
	}
	return sh
}

// query builds a URL path with the non-empty parameters of kv (name,
// value pairs), in order.
func query(path string, kv ...string) string {
	v := url.Values{}
	var keys []string
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
			keys = append(keys, kv[i])
		}
	}
	if len(keys) == 0 {
		return path
	}
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(v.Get(k)))
	}
	return path + "?" + b.String()
}
