package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/store"
)

// handBuilt loads analysis/testdata/handbuilt.jsonl (see
// analysis/fixture_test.go: alpha and beta against "sim" on s1-s4, rollout
// 0, plus a failed beta episode on s5) through a temporary store, as the
// report command reads runs.
func handBuilt(t *testing.T) (eps []*episode.Episode, run store.Run) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "analysis", "testdata", "handbuilt.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run = store.Run{ID: "run1", Kind: "eval", Seed: 7, Version: "test", Status: store.StatusDone,
		Config: json.RawMessage(`{"persuaders":["alpha","beta"],"tmax":10}`)}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ep episode.Episode
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveEpisode(ctx, run.ID, &ep); err != nil {
			t.Fatal(err)
		}
	}
	if eps, err = db.Episodes(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if len(eps) != 9 {
		t.Fatalf("loaded %d episodes, want 9", len(eps))
	}
	if run, err = db.GetRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	return eps, run
}

// withRollouts adds a rollout-1 twin of every scored episode of eps, so
// that each (arm, scenario) forms a GRPO group of two. Changes, by hand:
// alpha s2's twin reads belief 0.3 (dense -0.2, not -0.3) but still
// rejects: dead and dense-separated; alpha s3's twin rejects (R_goal -3):
// live; every other twin is identical: dead, not separated. So alpha has
// 4 groups, 3 dead, 1 separated; beta 4 groups, 4 dead, 0 separated.
func withRollouts(eps []*episode.Episode) []*episode.Episode {
	out := slices.Clone(eps)
	for _, ep := range eps {
		if ep.Terminal == decision.TermFailed {
			continue
		}
		cp := *ep
		cp.Rollout = 1
		cp.Turns = slices.Clone(ep.Turns)
		if ep.Persuader == "alpha" && ep.ScenarioID == "s2" {
			b, d := 0.3, -0.2
			cp.Turns[0].Belief, cp.Turns[0].Dense = &b, &d
		}
		if ep.Persuader == "alpha" && ep.ScenarioID == "s3" {
			cp.Terminal, cp.RGoal = decision.TermReject, -3
		}
		out = append(out, &cp)
	}
	return out
}

func render(t *testing.T, f *Figure, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Write(&b, format); err != nil {
		t.Fatalf("%s %s: %v", f.Name, format, err)
	}
	return b.Bytes()
}

func TestFiguresHandBuilt(t *testing.T) {
	eps, _ := handBuilt(t)
	f5, err := Figure5(analysis.ActsByTurn(eps))
	if err != nil {
		t.Fatal(err)
	}
	var want5 []string
	for _, p := range []string{"alpha", "beta"} {
		for _, a := range []string{"diagnostic", "evidence", "plan", "commitment", "autonomy"} {
			want5 = append(want5, p+" / "+a)
		}
	}
	if !slices.Equal(f5.Series, want5) {
		t.Errorf("figure 5 series = %q, want %q", f5.Series, want5)
	}
	f6, err := Figure6(analysis.BeliefTrajectories(eps))
	if err != nil {
		t.Fatal(err)
	}
	want6 := []string{"alpha / ca", "alpha / pe", "alpha / ac", "beta / ca", "beta / pe", "beta / ac",
		"belief / accept", "belief / conditional", "belief / pending", "belief / reject"}
	if !slices.Equal(f6.Series, want6) || len(f6.Panels) != 3 {
		t.Errorf("figure 6 series = %q (%d panels), want %q (3 panels)", f6.Series, len(f6.Panels), want6)
	}
	ft, err := TerminalBars(nil)
	if !errors.Is(err, ErrNoData) || ft != nil {
		t.Errorf("TerminalBars(nil) = %v, %v; want ErrNoData", ft, err)
	}
	r, err := Build(eps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ft = r.Figures[0]
	if ft.Name != "terminals" || !slices.Equal(ft.Series, []string{"terminal / accept", "terminal / conditional", "terminal / pending", "terminal / reject"}) {
		t.Errorf("terminal bars %s series %q", ft.Name, ft.Series)
	}
	// Every series label appears as legend text in the SVG.
	for _, f := range []*Figure{f5, f6, ft} {
		svg := string(render(t, f, "svg"))
		for _, s := range f.Series {
			label := s[strings.LastIndex(s, " / ")+3:]
			if !strings.Contains(svg, ">"+label+"</text>") {
				t.Errorf("%s: legend text %q missing from SVG", f.Name, label)
			}
		}
		if strings.Contains(svg, "<?xml") || !strings.HasPrefix(svg, "<svg") {
			t.Errorf("%s: SVG keeps its XML prolog", f.Name)
		}
		if strings.Contains(svg, "font-family:Liberation Sans;") {
			t.Errorf("%s: SVG font has no fallback", f.Name)
		}
		render(t, f, "png")
	}
	// No group has two rollouts: Figure 7 has nothing to draw.
	adv, err := Advantages(eps, analysis.GroupOptions{}, grpo.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Figure7(analysis.DeadGroups(eps, analysis.GroupOptions{}), adv); !errors.Is(err, ErrNoData) {
		t.Errorf("Figure7 without groups: err = %v, want ErrNoData", err)
	}
	if err := f5.Write(io.Discard, "pdf"); err == nil {
		t.Error("Write(pdf) succeeded; want an unknown-format error")
	}
}

func TestFigure7Groups(t *testing.T) {
	hb, _ := handBuilt(t)
	eps := withRollouts(hb)
	st := analysis.DeadGroups(eps, analysis.GroupOptions{})
	if o := st.Overall[0]; o.Label != "alpha" || o.Groups != 4 || o.Dead != 3 || o.Separated != 1 {
		t.Fatalf("alpha groups = %+v, want 4 groups, 3 dead, 1 separated", o)
	}
	adv, err := Advantages(eps, analysis.GroupOptions{}, grpo.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// alpha: only s3 is live, R_goal (3, -3): A_out = ±3/(std + 1e-6) with
	// the sample std sqrt(18) = 4.2426, i.e. ±0.707107, on one turn each;
	// 14 turns in all (s1 2+2, s2 1+1, s3 1+1, s4 3+3).
	a := adv.Overall[0]
	if a.Groups != 4 || a.Turns != 14 || math.Abs(a.MeanAbsOut-2*0.7071066/14) > 1e-6 {
		t.Errorf("alpha advantage terms = %+v, want 4 groups, 14 turns, |A_out| 0.101015", a)
	}
	f, err := Figure7(st, adv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"overall / dead groups", "overall / dense-separated | dead", "advantage / |A_out|", "advantage / |λ·A_dense| (λ = 0.5)"}
	if len(f.Panels) != 2 || !slices.Equal(f.Series, want) {
		t.Errorf("figure 7 (eval) has %d panels, series %q; want 2, %q", len(f.Panels), f.Series, want)
	}
	render(t, f, "svg")
	render(t, f, "png")

	// Over training: rollout r at step r puts each group's twins at
	// different steps, so make four rollouts, two per step.
	var train []*episode.Episode
	for _, ep := range eps {
		cp := *ep
		cp.Rollout += 2
		train = append(train, ep, &cp)
	}
	opt := analysis.GroupOptions{Step: func(ep *episode.Episode) int { return ep.Rollout / 2 * 10 }}
	st = analysis.DeadGroups(train, opt)
	if adv, err = Advantages(train, opt, grpo.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if len(adv.Points) != 4 || adv.Points[1].Step != 10 {
		t.Fatalf("advantage points = %+v, want alpha and beta at steps 0 and 10", adv.Points)
	}
	if f, err = Figure7(st, adv); err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 3 || f.Series[0] != "dead over steps / alpha" || f.Series[1] != "dead over steps / beta" {
		t.Errorf("figure 7 (train) has %d panels, series %q", len(f.Panels), f.Series)
	}
	render(t, f, "svg")
}

func TestAdvantagesHandComputed(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	ep := func(sc string, rollout int, term decision.Terminal, rgoal float64, dense ...float64) *episode.Episode {
		e := &episode.Episode{ScenarioID: sc, Rollout: rollout, Persuader: "p", Persuadee: "sim", Terminal: term, RGoal: rgoal}
		for i, d := range dense {
			e.Turns = append(e.Turns, episode.Turn{T: i + 1, Dense: f(d)})
		}
		return e
	}
	eps := []*episode.Episode{
		// Live: R_goal (3, -3) -> A_out = ±0.707107; dense (0.2, -0.2),
		// sample std 0.282843 -> A_dense = ±0.707105, λ·|A_dense| = 0.353553.
		ep("a", 0, decision.TermAccept, 3, 0.2),
		ep("a", 1, decision.TermReject, -3, -0.2),
		// Dead: A_out = 0; dense (0.1, 0.1 | 0.1, 0.3): sample std 0.1,
		// scaled (the default) r~ = r/0.1 = (1, 1 | 1, 3); reverse sums
		// (2, 1 | 4, 3); λ·|.| sums to 5.
		ep("b", 0, decision.TermConditional, 1, 0.1, 0.1),
		ep("b", 1, decision.TermConditional, 1, 0.1, 0.3),
		// Failed rollouts are dropped; a singleton group is left out.
		ep("b", 2, decision.TermFailed, 0, 5),
		ep("c", 0, decision.TermAccept, 3, 0.4),
	}
	adv, err := Advantages(eps, analysis.GroupOptions{}, grpo.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(adv.Overall) != 1 || len(adv.Points) != 1 {
		t.Fatalf("got %d overall, %d points; want 1, 1", len(adv.Overall), len(adv.Points))
	}
	p := adv.Overall[0]
	wantOut := 2 * 0.7071066 / 6
	wantDense := (2*0.3535527 + 5.0/(1+1e-5)) / 6 // ε = 1e-6 next to std 0.1
	if p.Groups != 2 || p.Turns != 6 || math.Abs(p.MeanAbsOut-wantOut) > 1e-6 || math.Abs(p.MeanAbsDense-wantDense) > 1e-6 || adv.Lambda != 0.5 {
		t.Errorf("got %+v; want 2 groups, 6 turns, |A_out| %.6f, |λ·A_dense| %.6f", p, wantOut, wantDense)
	}
	if adv.Points[0].Step != 0 || adv.Points[0].MeanAbsOut != p.MeanAbsOut {
		t.Errorf("step point %+v differs from overall %+v", adv.Points[0], p)
	}
	bad := grpo.DefaultConfig()
	bad.Lambda = -1
	if _, err := Advantages(eps, analysis.GroupOptions{}, bad); err == nil {
		t.Error("negative λ accepted")
	}
}

func TestFigureDeterministicAndPNGSize(t *testing.T) {
	eps, _ := handBuilt(t)
	build := func() *Figure {
		f, err := Figure5(analysis.ActsByTurn(eps))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := build(), build()
	for _, format := range Formats {
		if !bytes.Equal(render(t, a, format), render(t, b, format)) {
			t.Errorf("two renderings of the same figure differ (%s)", format)
		}
	}
	pngBytes := render(t, a, "png")
	cfg, err := png.DecodeConfig(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatal(err)
	}
	// Two 3.3 in panels side by side at 150 dpi: 990 px wide.
	w, h := a.Size()
	if cfg.Width != 990 || cfg.Height != int(h.Points()*DPI/72+0.5) || w.Points() != 475.2 {
		t.Errorf("PNG is %d x %d px for %.1f x %.1f pt; want 990 x %d", cfg.Width, cfg.Height, w.Points(), h.Points(), int(h.Points()*DPI/72+0.5))
	}
}

// checkHTML parses page as XML (the report is well-formed XHTML-compatible
// HTML) and checks that every reference is local: href/src/xlink:href
// point to an anchor of the page or to a file in dir; no script, external
// style sheet or CSS url(). It returns the number of top-level <svg>
// elements and the ids of the page.
func checkHTML(t *testing.T, page []byte, dir string) (svgs int, ids map[string]bool) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = true
	ids = map[string]bool{}
	var refs []string
	depth := 0 // nesting inside <svg>
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("index.html is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "svg":
				if depth == 0 {
					svgs++
				}
				depth++
			case "script", "link", "iframe", "object", "embed", "img":
				t.Errorf("index.html has a <%s> element", el.Name.Local)
			}
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "id":
					ids[a.Value] = true
				case "href", "src":
					refs = append(refs, a.Value)
				case "style":
					if strings.Contains(a.Value, "url(") {
						t.Errorf("style attribute loads %q", a.Value)
					}
				}
			}
		case xml.EndElement:
			if el.Name.Local == "svg" {
				depth--
			}
		case xml.CharData:
			if strings.Contains(string(el), "url(") || strings.Contains(string(el), "@import") {
				t.Errorf("page text or CSS loads a resource: %.80q", string(el))
			}
		}
	}
	for _, r := range refs {
		switch {
		case strings.HasPrefix(r, "#"):
			if !ids[r[1:]] {
				t.Errorf("link %q has no target", r)
			}
		case strings.Contains(r, ":") || strings.HasPrefix(r, "//") || strings.Contains(r, ".."):
			t.Errorf("non-local reference %q", r)
		default:
			if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
				t.Errorf("reference %q: %v", r, err)
			}
		}
	}
	return svgs, ids
}

func TestReportHTML(t *testing.T) {
	eps, run := handBuilt(t)
	info := RunInfo{ID: run.ID, Kind: run.Kind, Status: run.Status, Version: run.Version, Seed: run.Seed,
		CreatedAt: run.CreatedAt, Episodes: len(eps), Failed: 1,
		// A config that slipped a credential past the store must not leak.
		Config: json.RawMessage(`{"persuaders":["alpha","beta"],"engine":{"url":"local","api_key":"sk-SECRET1"}}`)}
	var steps []string
	r, err := Build(eps, Options{Title: "Hand-built <run>", Runs: []RunInfo{info}, CompareSeed: 1, Resamples: 500,
		Progress: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	names, err := r.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"terminals.svg", "terminals.png", "figure5.svg", "figure5.png", "figure6.svg", "figure6.png", "tables.md", "index.html"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("wrote %q, want %q", names, wantNames)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(wantNames) {
		t.Errorf("dir holds %d entries (temporary files left?), want %d", len(entries), len(wantNames))
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	svgs, ids := checkHTML(t, page, dir)
	if svgs != len(r.Figures) || svgs != 3 {
		t.Errorf("page embeds %d SVG figures, report has %d, want 3", svgs, len(r.Figures))
	}
	for _, id := range []string{"runs", "summary", "table6", "table7", "table8", "table8-shares", "table9", "figure5", "figure6", "compare"} {
		if !ids[id] {
			t.Errorf("section %q missing", id)
		}
	}
	s := string(page)
	for _, want := range []string{
		"Hand-built &lt;run&gt;",
		"not an LLM", "Dual use.",
		// Table 8 default: the accepted episode with the largest sum |r|:
		// beta s2 (1.0 - 0.5 = 0.5) over alpha s3 (0.9 - 0.4 =
		// 0.49999999999999994 in float64).
		"Probe trace: beta vs sim, scenario s2 rollout 0, accept",
		"Paired comparison: beta − alpha against sim",
		// Wilson 2/4 at z = 1.96: centre 0.5, half 1.95996/1.96036 ·
		// sqrt(1/16 + 3.84146/64) = 0.34996, so [15.0, 85.0].
		"<td>50.0 [15.0, 85.0]</td>",
		`&#34;api_key&#34;: &#34;[redacted]&#34;`,
		"<li>figure 7: nothing to plot: no scenario has 2 or more scored rollouts",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, "sk-SECRET1") {
		t.Error("page shows the credential")
	}
	if len(steps) < 8 || steps[0] != "summary (Tables 5 and 9)" {
		t.Errorf("progress steps = %q", steps)
	}
	// Table 5/9 summary by hand: alpha accepts e1, e3 of 4; beta e6 of 4
	// scored (e9 failed).
	if len(r.Summary) != 2 || r.Summary[0].Persuader != "alpha" || r.Summary[0].Set != "all" || r.Summary[0].Accept != 0.5 ||
		r.Summary[1].N != 4 || r.Summary[1].Failed != 1 || r.Summary[1].Accept != 0.25 {
		t.Errorf("summary = %+v", r.Summary)
	}
	// Top-two shares: every accepted episode has at most two turns, so the
	// two largest carry 100%.
	for _, sec := range r.Tables {
		if sec.ID == "table8-shares" {
			want := [][]string{{"alpha", "2", "2", "100.0", "100.0", "100.0", "100.0"}, {"beta", "1", "1", "100.0", "100.0", "100.0", "100.0"}}
			if !slices.EqualFunc(sec.Table.Rows, want, slices.Equal) {
				t.Errorf("top-two rows = %q, want %q", sec.Table.Rows, want)
			}
		}
	}
	// Pairs by hand: s1 alpha accept / beta conditional, s2 reject /
	// accept, s3 accept / reject, s4 pending / pending; s5 is beta's only
	// (failed). Against the default baseline alpha (the first persuader),
	// beta − alpha has 1 win (s2) and 2 losses (s1, s3).
	if len(r.Comparisons) != 1 || r.Baseline != "alpha" || r.Comparisons[0].N != 4 || r.Comparisons[0].Wins != 1 || r.Comparisons[0].Losses != 2 ||
		r.Comparisons[0].A.Persuader != "beta" || r.Comparisons[0].B.Persuader != "alpha" {
		t.Errorf("comparison = %+v, want beta − alpha, 4 pairs, 1 win, 2 losses", r.Comparisons)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "tables.md"))
	if !bytes.HasPrefix(md, []byte("# Hand-built <run>\n")) || !bytes.Contains(md, []byte("| alpha | sim | all | 4 | 50.0 |")) {
		t.Errorf("tables.md starts %.200q", md)
	}
}

func TestReportGroupsAndSets(t *testing.T) {
	hb, _ := handBuilt(t)
	eps := withRollouts(hb)
	set := map[string]string{"s1": "one", "s2": "one", "s3": "two"}
	r, err := Build(eps, Options{Sets: []string{"two", "one"}, SetOf: func(id string) string { return set[id] }, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Summary {
		got = append(got, s.Persuader+"/"+s.Set)
	}
	// Listed sets first in the given order; s4 has no set: "all".
	want := []string{"alpha/two", "alpha/one", "alpha/all", "beta/two", "beta/one", "beta/all"}
	if !slices.Equal(got, want) {
		t.Errorf("summary groups = %q, want %q", got, want)
	}
	dir := t.TempDir()
	if _, err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	svgs, ids := checkHTML(t, page, dir)
	if svgs != 4 || !ids["figure7"] || !ids["fig-figure7"] {
		t.Errorf("page embeds %d figures (want 4, Figure 7 included)", svgs)
	}
	if !bytes.Contains(page, []byte("Figure 7(c) data")) {
		t.Error("Figure 7(c) data table missing")
	}
}

func TestReportDeterministic(t *testing.T) {
	eps, run := handBuilt(t)
	write := func(generated string) string {
		r, err := Build(eps, Options{Runs: []RunInfo{{ID: run.ID, Config: run.Config, CreatedAt: run.CreatedAt}},
			Generated: generated, Resamples: 300, CompareSeed: 3})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := r.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := write(""), write("")
	files, _ := os.ReadDir(a)
	for _, f := range files {
		x, _ := os.ReadFile(filepath.Join(a, f.Name()))
		y, err := os.ReadFile(filepath.Join(b, f.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two reports of the same run", f.Name())
		}
	}
	// With a generated-at line, only that line differs.
	c := write("2030-01-02T03:04:05Z")
	x, _ := os.ReadFile(filepath.Join(a, "index.html"))
	y, _ := os.ReadFile(filepath.Join(c, "index.html"))
	if got := strings.Replace(string(y), " Generated 2030-01-02T03:04:05Z.", "", 1); got != string(x) {
		t.Error("the generated-at line changes more than itself")
	}
}

func TestWriteDirErrors(t *testing.T) {
	eps, _ := handBuilt(t)
	r, err := Build(eps, Options{Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := r.WriteDir(file); err == nil {
		t.Error("WriteDir onto a file succeeded")
	}
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("Build(nil) succeeded")
	}
	// A failing writer leaves nothing behind.
	dir := t.TempDir()
	err = writeAtomic(filepath.Join(dir, "x.html"), func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("boom")
	})
	if entries, _ := os.ReadDir(dir); err == nil || len(entries) != 0 {
		t.Errorf("failed write: err %v, %d files left", err, len(entries))
	}
}

func TestRedactedConfig(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, ``},
		{`{"b":1,"a":[1,2]}`, "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{`{"roles":[{"name":"x","OPENAI_API_KEY":"k1"}],"password":""}`,
			"{\n  \"password\": \"\",\n  \"roles\": [\n    {\n      \"OPENAI_API_KEY\": \"[redacted]\",\n      \"name\": \"x\"\n    }\n  ]\n}"},
	} {
		if got := redactedConfig(json.RawMessage(c.in)); got != c.want {
			t.Errorf("redactedConfig(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNumericCells(t *testing.T) {
	for s, want := range map[string]bool{"12.5": true, "+0.31": true, "-": true, "3/8": true, "1.3e-06": true,
		"27.5%": true, "": true, "alpha": false, "EB": false, "+3.83, 95% CI [+3.62, +4.04]": false} {
		if numeric(s) != want {
			t.Errorf("numeric(%q) = %v, want %v", s, !want, want)
		}
	}
}

func TestFitTitle(t *testing.T) {
	p := newPanel("(a) 20261129-111745-bf13:script vs a-very-long-persuadee-name-for-testing", "", "")
	w := vg.Points(200)
	fitTitle(p, w)
	got := p.Title.Text
	if p.Title.TextStyle.Font.Size != 8 || p.Title.TextStyle.Width(got) > w || !strings.HasPrefix(got, "(a) 2026") ||
		!strings.HasSuffix(got, "testing") || strings.Count(got, "…") != 1 {
		t.Errorf("fitted title %q at %v pt", got, p.Title.TextStyle.Font.Size)
	}
	fitTitle(p, w)
	if p.Title.Text != got {
		t.Errorf("second fit changed %q to %q", got, p.Title.Text)
	}
	short := newPanel("(b) alpha", "", "")
	fitTitle(short, w)
	if short.Title.Text != "(b) alpha" || short.Title.TextStyle.Font.Size != panelSize {
		t.Errorf("short title changed to %q at %v pt", short.Title.Text, short.Title.TextStyle.Font.Size)
	}
}

func TestTrainingFigure(t *testing.T) {
	steps := []store.StepMetrics{
		{Step: 0, Metrics: map[string]float64{"accept": 0.25, "mean_r_out": -0.5, "dead_share": 0.5, "separated_share": 1,
			"mean_abs_a_out": 0.4, "mean_abs_lambda_a_dense": 0.6, "kl": 0, "entropy": 1.6}},
		{Step: 1, Metrics: map[string]float64{"accept": 0.5, "mean_r_out": 0.5, "dead_share": 0, "separated_share": 0,
			"mean_abs_a_out": 0.7, "mean_abs_lambda_a_dense": 0.5, "kl": 0.01, "entropy": 1.5}},
	}
	if _, err := TrainingFigure([]TrainingRun{{RunID: "empty"}}); !errors.Is(err, ErrNoData) {
		t.Errorf("no steps: err = %v, want ErrNoData", err)
	}
	f, err := TrainingFigure([]TrainingRun{{RunID: "tr1", Steps: steps}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"full acceptance / accept", "mean outcome reward / R_out", "dead groups (Figure 7a) / dead",
		"dead groups (Figure 7a) / separated | dead", "advantage terms (Figure 7c) / |A_out|", "advantage terms (Figure 7c) / |λ·A_dense|",
		"KL to the reference / KL", "policy entropy / entropy"}
	if len(f.Panels) != 6 || !slices.Equal(f.Series, want) {
		t.Errorf("training figure: %d panels, series %q", len(f.Panels), f.Series)
	}
	render(t, f, "svg")
	// Only some metrics stored: only their panels; several runs: one
	// legend entry per run.
	part := []store.StepMetrics{{Step: 0, Metrics: map[string]float64{"kl": 0.1}}, {Step: 3, Metrics: map[string]float64{"kl": 0.2}}}
	f, err = TrainingFigure([]TrainingRun{{RunID: "a", Steps: part}, {RunID: "b", Steps: part}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 1 || !slices.Equal(f.Series, []string{"KL to the reference / a KL", "KL to the reference / b KL"}) ||
		f.Legend[0].Title != "run:" || len(f.Legend[0].Entries) != 2 {
		t.Errorf("partial training figure: %d panels, series %q, legend %+v", len(f.Panels), f.Series, f.Legend)
	}
	render(t, f, "png")
	// The data table: steps 1-based, separated|dead undefined where
	// nothing is dead.
	tab := trainingTable([]TrainingRun{{RunID: "tr1", Steps: steps}})
	wantRows := [][]string{
		{"tr1", "1", "25.0", "-0.500", "50.0", "100.0", "0.400", "0.600", "0.0000", "1.600"},
		{"tr1", "2", "50.0", "0.500", "0.0", "-", "0.700", "0.500", "0.0100", "1.500"},
	}
	if !slices.EqualFunc(tab.Rows, wantRows, slices.Equal) {
		t.Errorf("training rows = %q, want %q", tab.Rows, wantRows)
	}
	// In a report: the figure and its data are embedded.
	eps, _ := handBuilt(t)
	r, err := Build(eps, Options{Training: []TrainingRun{{RunID: "tr1", Steps: steps}}, Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if svgs, ids := checkHTML(t, page, dir); svgs != 4 || !ids["training"] {
		t.Errorf("report with training metrics embeds %d figures (want 4 with the training curves)", svgs)
	}
}

// TestBaselineComparisons checks --baseline: every other persuader is
// compared against the chosen one, per persuadee, and an unknown name is an
// error. With baseline beta the hand-built pairs (see TestReportHTML) give
// alpha − beta 2 wins (s1, s3) and 1 loss (s2).
func TestBaselineComparisons(t *testing.T) {
	eps, _ := handBuilt(t)
	r, err := Build(eps, Options{Baseline: "beta", Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Comparisons) != 1 || r.Comparisons[0].A.Persuader != "alpha" || r.Comparisons[0].B.Persuader != "beta" ||
		r.Comparisons[0].Wins != 2 || r.Comparisons[0].Losses != 1 {
		t.Errorf("comparisons = %+v, want alpha − beta with 2 wins, 1 loss", r.Comparisons)
	}
	three := slices.Clone(eps)
	for _, ep := range eps {
		if ep.Persuader == "alpha" {
			cp := *ep
			cp.Persuader = "gamma"
			three = append(three, &cp)
		}
	}
	r, err = Build(three, Options{Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Comparisons {
		got = append(got, c.A.Persuader+"-"+c.B.Persuader)
	}
	// gamma is alpha's copy: no discordant pair.
	if fmt.Sprint(got) != "[beta-alpha gamma-alpha]" || r.Comparisons[1].Wins != 0 || r.Comparisons[1].Losses != 0 {
		t.Errorf("comparisons %v (%+v), want [beta-alpha gamma-alpha] with gamma tied", got, r.Comparisons)
	}
	if _, err := Build(eps, Options{Baseline: "nobody"}); err == nil || !strings.Contains(err.Error(), `baseline "nobody"`) {
		t.Errorf("unknown baseline: err = %v", err)
	}
}

// With ViewAddr, the runs table links each run and Table 8 links its
// episode to a running viewer; without it there are no such links.
func TestReportViewLinks(t *testing.T) {
	eps, run := handBuilt(t)
	info := RunInfo{ID: run.ID, Kind: run.Kind, Status: run.Status, Episodes: len(eps)}
	for _, addr := range []string{"", "127.0.0.1:9000"} {
		r, err := Build(eps, Options{Runs: []RunInfo{info}, Resamples: 100, ViewAddr: addr})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		runLink := `<a href="http://127.0.0.1:9000/runs/` + run.ID + `">` + run.ID + `</a>`
		epLink := `<a href="http://127.0.0.1:9000/runs/` + run.ID + `/episode?k=`
		has := strings.Contains(b.String(), runLink) && strings.Contains(b.String(), epLink)
		if has != (addr != "") || strings.Contains(b.String(), "127.0.0.1:9000") != (addr != "") {
			t.Errorf("ViewAddr %q: links present %v", addr, has)
		}
	}
}
