package view

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

func TestHintAndRunURL(t *testing.T) {
	if got, want := Hint("runs.db", "20260101-000000-aaaa"), "view: persuarena view --db runs.db, then open http://127.0.0.1:8080/runs/20260101-000000-aaaa"; got != want {
		t.Errorf("Hint = %q, want %q", got, want)
	}
	if got, want := RunURL("127.0.0.1:9000", "a b"), "http://127.0.0.1:9000/runs/a%20b"; got != want {
		t.Errorf("RunURL = %q, want %q", got, want)
	}
}

func TestRunsPage(t *testing.T) {
	s, _, _ := newFixture(t)
	code, body := get(t, s, "/")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	heldout, err := scenario.ResolveSplit(scenario.Heldout, "p4g")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "runs page", body,
		`href="/runs/`+runA+`"`, `href="/runs/`+runB+`"`, `href="/runs/`+runBig+`"`,
		`<tr class="run status-running" data-run="`+runB+`">`,
		// rb stores 4 of its 1 × 1 × |p4g held-out| × 1 planned episodes.
		`<progress max="`+itoa(len(heldout))+`" value="4"></progress>`,
		`data-refresh="3"`, "script × sim on p4g heldout, 1 rollout", "serve")
	// Newest first.
	if ia, ib := strings.Index(body, `data-run="`+runA), strings.Index(body, `data-run="`+runB); ib > ia {
		t.Errorf("run %s listed after %s; want newest first", runB, runA)
	}
}

func TestRunPage(t *testing.T) {
	s, _, _ := newFixture(t)
	code, body := get(t, s, "/runs/"+runA)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	// 4 episodes, 1 failed: of 3 scored, 1 accept, 1 conditional, 0
	// pending, 1 reject, 0 truncated. Wilson 95%: 1/3 -> [6.1, 79.2],
	// 0/3 -> [0.0, 56.1] (hand-computed).
	cells := rowCells(body, "<td>script</td><td>sim</td>")
	want := []string{"script", "sim", "4", "1", "33.3% [6.1, 79.2]", "33.3% [6.1, 79.2]", "0.0% [0.0, 56.1]", "33.3% [6.1, 79.2]", "0.0% [0.0, 56.1]"}
	if strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("outcome row = %q, want %q", cells, want)
	}
	mustContain(t, "run page", body, "episodes 1–4 of 4 matching", `class="episode-link"`, "engine refused the request")
	if strings.Contains(body, "data-refresh") {
		t.Error("a done run's page refreshes itself")
	}

	_, body = get(t, s, "/runs/"+runA+"?terminal=failed")
	mustContain(t, "terminal=failed", body, "episodes 1–1 of 1 matching", "engine refused the request", `<option selected>failed</option>`)
	_, body = get(t, s, "/runs/"+runA+"?family=charity&split=heldout&persuadee=sim")
	mustContain(t, "family=charity", body, "episodes 1–4 of 4 matching")
	_, body = get(t, s, "/runs/"+runA+"?family=healthcare")
	mustContain(t, "family=healthcare", body, "no episode matches")
	if strings.Contains(body, `class="episode-link"`) {
		t.Error("family=healthcare lists episodes")
	}

	_, body = get(t, s, "/runs/"+runB)
	mustContain(t, "running run", body, `data-refresh="5"`)
}

func TestRunPagePaging(t *testing.T) {
	s, _, _ := newFixture(t)
	_, body := get(t, s, "/runs/"+runBig+"?terminal=reject&page=2")
	mustContain(t, "page 2", body, "episodes 51–100 of 120 matching",
		`id="prev" href="/runs/`+runBig+`?terminal=reject&amp;page=1"`, `id="next" href="/runs/`+runBig+`?terminal=reject&amp;page=3"`)
	_, body = get(t, s, "/runs/"+runBig+"?page=3")
	mustContain(t, "page 3", body, "episodes 101–120 of 120 matching", `id="prev"`)
	if strings.Contains(body, `id="next"`) {
		t.Error("last page has a next link")
	}
	if n := strings.Count(body, `class="episode-link"`); n != 20 {
		t.Errorf("page 3 lists %d episodes, want 20", n)
	}
	if code, _ := get(t, s, "/runs/"+runBig+"?page=0"); code != http.StatusBadRequest {
		t.Errorf("page=0: status %d, want 400", code)
	}
}

func TestEpisodePage(t *testing.T) {
	s, _, ss := newFixture(t)
	sc := ss[0]
	code, body := get(t, s, "/runs/"+runA+"/episode?k=script/sim/"+sc.ID+"%230")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	esc := template.HTMLEscapeString
	mustContain(t, "episode page", body,
		"script/sim/"+sc.ID+"#0", esc("script opens on "+sc.ID), "Tell me more.",
		`<span class="act">evidence</span><span class="act">autonomy</span>`,
		`<td class="decision final">accept</td>`,
		"CA 0.600 · PE 0.800 · AC -", "CA 0.100 · PE 0.300 · AC 0.200",
		`<td class="num">0.700</td>`, `<td class="num">&#43;0.300</td>`,
		"persuadee 310→25 tok (cached 128)", "persuadee 1.50 s", "persuader 12.5 ms",
		// Reward components: R_goal 3, R_strategy 0.5, R_out = 3 + 1·0.5.
		"<dd>&#43;3.00</dd>", "<dd>&#43;0.500</dd>", "<dd>&#43;3.500</dd>", "&#43;0.500 over 2 turns", "800.0 ms, 900→4 tok",
		// The chart: B_0, B_1, B_2 dots with tooltips.
		`<svg class="chart"`, "<title>t=0 B=0.200</title>", "<title>t=2 B=0.700 r=+0.300</title>",
		// The analyst-only panel holds the hidden profile.
		`id="hidden-profile"`, "Hidden profile — analyst only", esc(sc.Hidden.Persona), esc(sc.Hidden.Concerns[0].Description),
		esc(sc.Proposal))
	if n := strings.Count(body, `<circle class="dot"`); n != 3 {
		t.Errorf("%d belief dots, want 3", n)
	}
	// The hidden profile sits in its panel only, after the timeline.
	if i, j := strings.Index(body, `id="hidden-profile"`), strings.Index(body, esc(sc.Hidden.Persona)); j < i {
		t.Error("the persona appears outside the analyst-only panel")
	}

	// A run without scenario sets says so in the panel.
	_, body = get(t, s, "/runs/"+runBig+"/episode?k=script/sim/"+sc.ID+"%231")
	mustContain(t, "serve run episode", body, "run "+runBig+" stores no scenario sets")

	for path, want := range map[string]int{
		"/runs/" + runA + "/episode?k=script/sim/" + sc.ID + "%239": http.StatusNotFound,
		"/runs/nope/episode?k=script/sim/x%230":                     http.StatusNotFound,
		"/runs/" + runA + "/episode?k=garbage":                      http.StatusBadRequest,
		"/runs/nope":                                                http.StatusNotFound,
		"/nothing-here":                                             http.StatusNotFound,
	} {
		if code, _ := get(t, s, path); code != want {
			t.Errorf("%s: status %d, want %d", path, code, want)
		}
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/runs/"+runA, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", rec.Code)
	}
}

func TestComparePage(t *testing.T) {
	s, _, ss := newFixture(t)
	code, body := get(t, s, "/compare")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	mustContain(t, "empty compare", body, `<option>`+runA+`</option>`, `id="compare-form"`)

	code, body = get(t, s, "/compare?a="+runA+"&b="+runB)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	// Defaults: script on A, informer on B, persuadee sim. Pairs:
	// accept→accept, conditional→accept, reject→reject, failed→pending.
	mustContain(t, "compare", body, `<span id="paired">4</span>`, `<span id="changed-count">2</span>`,
		`<option selected>script</option>`, `<option selected>informer</option>`,
		// Full acceptance over the 3 pairs both sides scored: 1/3 and 2/3
		// (Wilson 95% hand-computed); Δ = -33.3 pp, 0 wins, 1 loss,
		// McNemar exact p(0, 1) = 1.
		"A 33.3% [6.1, 79.2] · B 66.7% [20.8, 93.9]", `<span id="delta">-33.3 pp</span>`, "wins 0 / losses 1", "McNemar exact p = 1",
		"1–4 of 4")
	for from, want := range map[string][]string{
		"accept":      {"accept", "1", "0", "0", "0", "0", "0", "1"},
		"conditional": {"conditional", "1", "0", "0", "0", "0", "0", "1"},
		"reject":      {"reject", "0", "0", "0", "1", "0", "0", "1"},
		"failed":      {"failed", "0", "0", "1", "0", "0", "0", "1"},
	} {
		if got := rowCells(body, "<tr><th>"+from+"</th>"); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("transition row %s = %q, want %q", from, got, want)
		}
	}
	_, body = get(t, s, "/compare?a="+runA+"&b="+runB+"&changed=1")
	mustContain(t, "changed only", body, "showing changed pairs only", "1–2 of 2")
	if n := strings.Count(body, `class="pair-link"`); n != 2 {
		t.Errorf("changed only lists %d pairs, want 2", n)
	}

	sc := ss[1]
	code, body = get(t, s, "/compare/episode?a="+runA+"&b="+runB+"&pa=script&pb=informer&persuadee=sim&scenario="+sc.ID+"&rollout=0")
	if code != http.StatusOK {
		t.Fatalf("pair: status %d: %s", code, body)
	}
	mustContain(t, "pair page", body, `id="side-a"`, `id="side-b"`,
		template.HTMLEscapeString("script opens on "+sc.ID), template.HTMLEscapeString("informer opens on "+sc.ID),
		`<span class="terminal t-conditional">conditional</span>`, `<span class="terminal t-accept">accept</span>`)
	if code, _ := get(t, s, "/compare/episode?a="+runA); code != http.StatusBadRequest {
		t.Errorf("pair without keys: status %d, want 400", code)
	}
	if code, _ := get(t, s, "/compare?a="+runA+"&b=nope"); code != http.StatusNotFound {
		t.Errorf("compare with an unknown run: status %d, want 404", code)
	}
}

func TestStaticAssets(t *testing.T) {
	s, _, _ := newFixture(t)
	for path, want := range map[string]string{"/static/style.css": "text/css", "/static/app.js": "javascript"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), want) || rec.Body.Len() == 0 {
			t.Errorf("%s: status %d, type %q, %d bytes", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
		}
	}
	// No page loads anything from another host.
	_, body := get(t, s, "/runs/"+runA)
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
		t.Error("a page references another host")
	}
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// rowCells returns the text of the cells of the first table row of body
// that contains marker.
func rowCells(body, marker string) []string {
	i := strings.Index(body, marker)
	if i < 0 {
		return nil
	}
	start := strings.LastIndex(body[:i+3], "<tr")
	end := strings.Index(body[start:], "</tr>")
	if start < 0 || end < 0 {
		return nil
	}
	row := body[start : start+end]
	var out []string
	for _, c := range regexp.MustCompile(`<t[dh][^>]*>`).Split(row, -1)[1:] {
		out = append(out, strings.TrimSpace(tagRE.ReplaceAllString(c, "")))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
