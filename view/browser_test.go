package view

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium (or Chrome) binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowser drives the viewer in headless Chromium (chromedp): the runs
// page, a run page, its filters (the form's button and the select's
// change handler of app.js), an episode page and a run comparison down
// to the side-by-side pair, checking what each page shows and writing a
// screenshot of each to $PERSUARENA_ARTIFACTS (a temporary directory
// when unset; the test logs where). Without Chromium it fails when CI is
// set and skips otherwise.
func TestBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set and no Chromium is installed (apt-get install chromium): the browser test must run in CI")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium); the browser test runs in CI")
	}
	dir := os.Getenv("PERSUARENA_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, "view-browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)

	s, _, ss := newFixture(t)
	srv := httptest.NewServer(s)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1600))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// shot saves a screenshot artefact. Headless Chromium on a loaded
	// machine can stall a capture; a screenshot is a record, not a check,
	// so a capture that takes over 10 s is logged and the test goes on.
	shot := func(name string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Logf("screenshot %s not taken: %v", name, err)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(step, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: text of %s: %v", step, sel, err)
		}
		return strings.TrimSpace(s)
	}
	count := func(step, sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err != nil {
			t.Fatalf("%s: count %s: %v", step, sel, err)
		}
		return n
	}
	// arrive waits until the page's address holds want and the document
	// has loaded, so a check never reads the page a click left.
	arrive := func(step, want string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			check := chromedp.Evaluate[bool](`location.href.includes(` + jsString(want) + `) && document.readyState === "complete"`)
			deadline := time.Now().Add(15 * time.Second)
			for {
				// A navigation in flight destroys the page's context:
				// such errors mean "not yet".
				if ok, err := check(ctx, tg); err == nil && ok {
					return chromedp.Void{}, nil
				}
				if time.Now().After(deadline) {
					return chromedp.Void{}, fmt.Errorf("%s: the page did not reach an address holding %q", step, want)
				}
				select {
				case <-ctx.Done():
					return chromedp.Void{}, ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}

	// The runs page, newest first, the running run marked live.
	do("runs page", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#runs")))
	shot("1-runs")
	if got := text("runs page", `tr[data-run="`+runB+`"] td.status`); got != "running" {
		t.Errorf("run %s status %q, want running", runB, got)
	}
	if got := text("runs page", "header .live"); got != "live" {
		t.Errorf("live marker %q", got)
	}
	if n := count("runs page", "tr.run"); n != 3 {
		t.Errorf("%d runs listed, want 3", n)
	}

	// Navigate to run A by its link.
	do("open run", chromedp.Click(chromedp.CSS(`tr[data-run="`+runA+`"] a.run-link`)), arrive("open run", "/runs/"+runA),
		chromedp.WaitVisible(chromedp.CSS("#outcomes")))
	shot("2-run")
	if got := text("run page", "#run-id"); got != runA {
		t.Errorf("run page of %q, want %s", got, runA)
	}
	if got := text("run page", "#episode-count"); got != "episodes 1–4 of 4 matching" {
		t.Errorf("episode count %q", got)
	}

	// Filter with the form's button: terminal = failed.
	do("filter failed", chromedp.SetValue(chromedp.CSS(`select[name="terminal"]`), "failed"),
		chromedp.Click(chromedp.CSS("#apply")), arrive("filter failed", "terminal=failed"), chromedp.WaitVisible(chromedp.CSS("#episodes")))
	shot("3-run-filtered-failed")
	if got := text("filter failed", "#episode-count"); got != "episodes 1–1 of 1 matching" {
		t.Errorf("failed filter: %q", got)
	}
	if got := text("filter failed", "#episodes td.error"); got != "engine refused the request" {
		t.Errorf("failed episode's error %q", got)
	}

	// Filter by changing a select (app.js submits the form): a family
	// none of the p4g scenarios has.
	do("filter family", chromedp.Navigate(srv.URL+"/runs/"+runA), chromedp.WaitVisible(chromedp.CSS("#filters")),
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('select[name="family"]'); s.value = "healthcare"; s.dispatchEvent(new Event("change")); })()`),
		arrive("filter family", "family=healthcare"), chromedp.WaitVisible(chromedp.CSS("#episode-count")))
	if got := text("filter family", "#episode-count"); got != "no episode matches" {
		t.Errorf("family filter: %q", got)
	}

	// An episode page: the accepted episode of scenario 0.
	do("episode", chromedp.Navigate(srv.URL+"/runs/"+runA+"?terminal=accept"), chromedp.WaitVisible(chromedp.CSS("#episodes")),
		chromedp.Click(chromedp.CSS("a.episode-link")), arrive("episode", "/episode?"), chromedp.WaitVisible(chromedp.CSS("#hidden-profile")))
	shot("4-episode")
	if got := text("episode", "#episode-key"); got != "script/sim/"+ss[0].ID+"#0" {
		t.Errorf("episode key %q", got)
	}
	if n := count("episode", "svg.chart circle.dot"); n != 3 {
		t.Errorf("%d belief dots, want 3", n)
	}
	if n := count("episode", "table.timeline tr.turn"); n != 2 {
		t.Errorf("%d timeline turns, want 2", n)
	}
	if got := text("episode", "#hidden-profile h2"); got != "Hidden profile — analyst only" {
		t.Errorf("profile panel heading %q", got)
	}

	// Compare A with B from the run page's link.
	do("compare", chromedp.Navigate(srv.URL+"/runs/"+runA), chromedp.WaitVisible(chromedp.CSS("#compare-link")),
		chromedp.Click(chromedp.CSS("#compare-link")), arrive("compare", "/compare?"), chromedp.WaitVisible(chromedp.CSS("#compare-form")),
		chromedp.SetValue(chromedp.CSS(`select[name="b"]`), runB), chromedp.Click(chromedp.CSS("#compare-apply")),
		arrive("compare", "b="+runB), chromedp.WaitVisible(chromedp.CSS("#transitions")))
	shot("5-compare")
	if got := text("compare", "#paired") + "/" + text("compare", "#changed-count"); got != "4/2" {
		t.Errorf("paired/changed = %s, want 4/2", got)
	}
	do("changed only", chromedp.Click(chromedp.CSS("#show-changed")), arrive("changed only", "changed=1"),
		chromedp.WaitVisible(chromedp.CSS("#show-all")))
	if n := count("changed only", "#pairs tr.pair.changed"); n != 2 || count("changed only", "#pairs tr.pair") != 2 {
		t.Errorf("changed only lists %d changed pairs, want 2 and nothing else", n)
	}
	do("pair", chromedp.Click(chromedp.CSS("a.pair-link")), arrive("pair", "/compare/episode?"), chromedp.WaitVisible(chromedp.CSS("#side-b")))
	shot("6-pair")
	if a, b := count("pair", "#side-a tr.turn"), count("pair", "#side-b tr.turn"); a != 2 || b != 2 {
		t.Errorf("side-by-side turns %d and %d, want 2 and 2", a, b)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
