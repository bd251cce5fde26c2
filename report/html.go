package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/view"
)

// htmlTable is a Table prepared for the template.
type htmlTable struct {
	// Caption, when not empty, is shown above the table.
	Caption string
	Header  []htmlCell
	Rows    [][]htmlCell
	Notes   []string
}

type htmlCell struct {
	Text string
	Num  bool
}

// numeric reports whether a cell reads as a number ("12.5", "+0.31", "-",
// "3/8", "1.3e-06", "27.5%"), so that its column is right-aligned.
func numeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || s == "-" {
		return true
	}
	if i := strings.IndexByte(s, '/'); i > 0 {
		return numeric(s[:i]) && numeric(s[i+1:])
	}
	_, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return err == nil
}

func toHTML(t analysis.Table) htmlTable {
	right := make([]bool, len(t.Header))
	for j := 1; j < len(t.Header); j++ {
		all, some := true, false
		for _, r := range t.Rows {
			if j < len(r) {
				c := strings.TrimSpace(r[j])
				all = all && numeric(c)
				some = some || (c != "" && c != "-")
			}
		}
		right[j] = all && some
	}
	h := htmlTable{Notes: t.Notes}
	for j, c := range t.Header {
		h.Header = append(h.Header, htmlCell{c, right[j]})
	}
	for _, r := range t.Rows {
		row := make([]htmlCell, len(t.Header))
		for j := range row {
			if j < len(r) {
				row[j].Text = r[j]
			}
			row[j].Num = right[j]
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}

type htmlSection struct {
	Section
	T htmlTable
}

type htmlFigure struct {
	*Figure
	SVG template.HTML
	// Data are the figure's data tables.
	Data []htmlSection
}

type htmlRun struct {
	RunInfo
	Created, ConfigJSON, Link string
}

type page struct {
	*Report
	Runs      []htmlRun
	Main, Cmp []htmlSection
	Figs      []htmlFigure
	Sim       bool
	// HasTraining is set when the training-curves figure is shown.
	HasTraining bool
	CSS         template.CSS
}

// css is the report's only style sheet: a readable column, plain tables,
// figures that shrink to the page, and a print layout without chrome.
const css = `
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d9dce1; --stripe: #f6f7f9; --accent: #0b57a4; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.1em; }
h2 { font-size: 1.25em; margin: 2.2em 0 0.4em; padding-bottom: 0.2em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05em; margin: 1.4em 0 0.3em; }
p, li { max-width: 78ch; }
a { color: var(--accent); }
.sub { color: var(--muted); margin-top: 0; }
.note { background: #f3f7fc; border-left: 4px solid var(--accent); padding: 10px 14px; margin: 14px 0; max-width: none; }
.note p { margin: 0.3em 0; }
nav ol { columns: 2; padding-left: 1.3em; margin: 0.4em 0; }
.wrap { overflow-x: auto; margin: 0.6em 0; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; color: var(--muted); }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; vertical-align: top; }
th { background: #eef0f3; font-weight: 600; border-bottom: 2px solid #c4c8ce; }
tbody tr:nth-child(even) td { background: var(--stripe); }
.num { text-align: right; }
ul.notes { margin: 0.2em 0 0; padding-left: 1.2em; color: var(--muted); font-size: 13px; }
figure { margin: 1.2em 0 2em; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 14px; margin-top: 6px; max-width: 90ch; }
.files { font-size: 13px; color: var(--muted); }
details { margin: 0.6em 0; }
summary { cursor: pointer; color: var(--accent); }
pre { background: var(--stripe); padding: 10px 12px; overflow-x: auto; font-size: 12px; border: 1px solid var(--line); }
footer { margin-top: 3em; color: var(--muted); font-size: 13px; }
@media print {
  main { max-width: none; padding: 0; }
  a { color: inherit; text-decoration: none; }
  .files, nav, summary { display: none; }
  figure, table { break-inside: avoid; }
  h2 { break-after: avoid; }
}
`

var tmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="sub">{{.Episodes}} episodes{{if .Failed}} ({{.Failed}} failed, left out of every outcome){{end}} from {{len .Runs}} run{{if ne (len .Runs) 1}}s{{end}} · persuaders: {{range $i, $p := .Persuaders}}{{if $i}}, {{end}}{{$p}}{{end}} · persuadees: {{range $i, $p := .Persuadees}}{{if $i}}, {{end}}{{$p}}{{end}}</p>
<div class="note">
{{- if .Sim}}
<p><strong>About the persuadee “sim”.</strong> It is PersuArena's seeded psychological simulator, not an LLM: numbers against it show how persuaders behave with that simulator, not with people or with the paper's LLM persuadee.</p>
{{- end}}
<p><strong>Dual use.</strong> Persuasion techniques can be misused. PersuArena's defaults reward honest, respectful persuasion: no deception and no pressure, and the persuadee's autonomy is part of what is measured.</p>
</div>
<nav><strong>Contents</strong>
<ol>
<li><a href="#runs">Runs</a></li>
{{- range .Main}}
<li><a href="#{{.ID}}">{{.Heading}}</a></li>
{{- end}}
{{- range .Figs}}{{if ne .Name "terminals"}}
<li><a href="#{{.Name}}">{{.Title}}</a></li>
{{- end}}{{end}}
{{- range .Cmp}}
<li><a href="#{{.ID}}">{{.Heading}}</a></li>
{{- end}}
</ol>
</nav>

<h2 id="runs">Runs</h2>
<div class="wrap"><table>
<thead><tr><th>run</th><th>kind</th><th>status</th><th>created (UTC)</th><th class="num">seed</th><th>version</th><th class="num">episodes</th><th class="num">failed</th></tr></thead>
<tbody>
{{- range .Runs}}
<tr><td>{{if .Link}}<a href="{{.Link}}">{{.ID}}</a>{{else}}{{.ID}}{{end}}</td><td>{{.Kind}}</td><td>{{.Status}}</td><td>{{.Created}}</td><td class="num">{{.Seed}}</td><td>{{.Version}}</td><td class="num">{{.Episodes}}</td><td class="num">{{.Failed}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- range .Runs}}{{if .ConfigJSON}}
<details><summary>Configuration of run {{.ID}}</summary>
<pre>{{.ConfigJSON}}</pre>
</details>
{{- end}}{{end}}
{{range .Main}}
<h2 id="{{.ID}}">{{.Heading}}</h2>
{{- if .Intro}}
<p>{{.Intro}}</p>
{{- end}}
{{- if .Link}}
<p><a href="{{.Link}}">Open this episode in the viewer</a></p>
{{- end}}
{{template "table" .T}}
{{- if eq .ID "summary"}}{{range $.Figs}}{{if eq .Name "terminals"}}{{template "figure" .}}{{end}}{{end}}{{end}}
{{end}}
{{- range .Figs}}{{if ne .Name "terminals"}}
<h2 id="{{.Name}}">{{.Title}}{{if .Ref}} ({{.Ref}}){{end}}</h2>
{{template "figure" .}}
{{- range .Data}}
<details><summary>{{.Heading}}</summary>
{{template "table" .T}}
</details>
{{- end}}
{{end}}{{end}}
{{- if .Skipped}}
<h2 id="skipped">Not shown</h2>
<ul>
{{- range .Skipped}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{range .Cmp}}
<h2 id="{{.ID}}">{{.Heading}}</h2>
<p>{{.Intro}}</p>
{{template "table" .T}}
{{end}}
<footer>
<p>Built from the run database by <code>persuarena report</code>{{if .Generator}} ({{.Generator}}){{end}}. Tables and Figures 5-7 are recomputed from the stored episodes by packages analysis, eval and grpo{{if .HasTraining}}; the training curves show the metrics the trainer stored{{end}}. Each figure is also saved next to this file as SVG and PNG, and every table in tables.md.{{if .Generated}} Generated {{.Generated}}.{{end}}</p>
</footer>
</main>
</body>
</html>
{{define "table"}}<div class="wrap"><table>
{{- if .Caption}}
<caption>{{.Caption}}</caption>
{{- end}}
<thead><tr>{{range .Header}}<th{{if .Num}} class="num"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Num}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- if .Notes}}
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}{{end}}
{{define "figure"}}<figure id="fig-{{.Name}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
<p class="files">Files: <a href="{{.Name}}.svg">{{.Name}}.svg</a> · <a href="{{.Name}}.png">{{.Name}}.png</a></p>
</figure>{{end}}
`))

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// figures as inline SVG, no script and no external reference (links point
// only to anchors and to the figure files WriteDir writes beside it). The
// page is also well-formed XML.
//
// Errors: a figure fails to render, or the writer's error.
func (r *Report) WriteHTML(w io.Writer) error {
	pg := page{Report: r, CSS: template.CSS(css)}
	for _, run := range r.Runs {
		created := ""
		if !run.CreatedAt.IsZero() {
			created = run.CreatedAt.UTC().Format(time.DateTime)
		}
		hr := htmlRun{RunInfo: run, Created: created, ConfigJSON: redactedConfig(run.Config)}
		if r.ViewAddr != "" {
			hr.Link = view.RunURL(r.ViewAddr, run.ID)
		}
		pg.Runs = append(pg.Runs, hr)
	}
	for _, f := range r.Figures {
		var b bytes.Buffer
		if err := f.Write(&b, "svg"); err != nil {
			return fmt.Errorf("report: figure %s: %w", f.Name, err)
		}
		// Shown at 1.25 times its natural size (1 pt = 4/3 CSS px), and
		// never wider than the page.
		w, _ := f.Size()
		svg := strings.Replace(b.String(), "<svg ", fmt.Sprintf(`<svg role="img" aria-label="%s" style="width:%.0fpx" `,
			template.HTMLEscapeString(f.Title), w.Points()*4/3*1.25), 1)
		pg.Figs = append(pg.Figs, htmlFigure{Figure: f, SVG: template.HTML(svg)})
	}
	for _, s := range r.Tables {
		hs := htmlSection{Section: s, T: toHTML(s.Table)}
		if s.Caption {
			hs.T.Caption = s.Table.Title
		}
		switch {
		case s.Figure != "":
			// The data of a figure that could not be drawn is left out:
			// "Not shown" says why.
			for i := range pg.Figs {
				if pg.Figs[i].Name == s.Figure {
					pg.Figs[i].Data = append(pg.Figs[i].Data, hs)
				}
			}
		case strings.HasPrefix(s.ID, "compare"):
			pg.Cmp = append(pg.Cmp, hs)
		default:
			pg.Main = append(pg.Main, hs)
		}
	}
	for _, f := range r.Figures {
		pg.HasTraining = pg.HasTraining || f.Name == "training"
	}
	for _, p := range r.Persuadees {
		pg.Sim = pg.Sim || p == "sim"
	}
	return tmpl.Execute(w, pg)
}

// WriteDir writes the report into dir (created if missing): each figure
// as NAME.svg and NAME.png, tables.md (every table in Markdown, for
// papers) and index.html last. Each file is written to a temporary file
// in dir and renamed into place, so a reader never sees a partial file.
// It returns the names written, in order.
//
// Errors: dir cannot be created or written; a figure fails to render.
func (r *Report) WriteDir(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var names []string
	put := func(name string, write func(io.Writer) error) error {
		if err := writeAtomic(filepath.Join(dir, name), write); err != nil {
			return err
		}
		names = append(names, name)
		return nil
	}
	for _, f := range r.Figures {
		for _, format := range Formats {
			if err := put(f.Name+"."+format, func(w io.Writer) error { return f.Write(w, format) }); err != nil {
				return names, err
			}
		}
	}
	if err := put("tables.md", r.writeMarkdown); err != nil {
		return names, err
	}
	if err := put("index.html", r.WriteHTML); err != nil {
		return names, err
	}
	return names, nil
}

// writeMarkdown writes every table in Markdown, one after another.
func (r *Report) writeMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "# %s\n\n", r.Title); err != nil {
		return err
	}
	for _, s := range r.Tables {
		if _, err := fmt.Fprintf(w, "## %s\n\n", s.Heading); err != nil {
			return err
		}
		if err := s.Table.WriteMarkdown(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes path through a temporary file in its directory and
// renames it into place; on error the temporary file is removed and path
// is untouched.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
