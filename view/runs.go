package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// runRow is one run of the runs page.
type runRow struct {
	store.RunSummary
	Created, Updated string
	Accept           string
	// Total is the eval plan's episode count (0 when unknown) and
	// Progress the stored share of it in [0, 1].
	Total    int
	Progress float64
	Running  bool
	Config   string
}

type runsPage struct {
	head
	Runs []runRow
}

const timeLayout = "2006-01-02 15:04:05Z"

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	rs, err := s.st.ListRuns(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	p := runsPage{head: head{Title: "Runs", DB: s.dbPath}}
	for _, run := range rs {
		row := runRow{RunSummary: run, Created: run.CreatedAt.UTC().Format(timeLayout),
			Updated: run.UpdatedAt.UTC().Format(timeLayout), Accept: "-",
			Running: run.Status == store.StatusRunning, Config: configSummary(run.Config)}
		if run.Episodes > run.Failed {
			row.Accept = pct(run.AcceptShare)
		}
		if row.Total = s.setsOf(run.Run).total; row.Total > 0 {
			row.Progress = min(1, float64(run.Episodes)/float64(row.Total))
		}
		if row.Running {
			p.Refresh = 3
		}
		p.Runs = append(p.Runs, row)
	}
	s.render(w, http.StatusOK, "runs", p)
}

// configSummary is a run configuration in one short line: an eval-like
// run's roles, sets, split and rollouts ("informer,pushy × sim on
// p4g,arena heldout, 1 rollout"), else its JSON cut to 120 bytes; "" for
// none.
func configSummary(raw json.RawMessage) string {
	var cfg runplan.Grid
	if len(raw) == 0 {
		return ""
	}
	if json.Unmarshal(raw, &cfg) == nil && len(cfg.Persuaders) > 0 && len(cfg.Scenarios) > 0 {
		s := strings.Join(cfg.Persuaders, ",") + " × " + strings.Join(cfg.Persuadees, ",") + " on " +
			strings.Join(cfg.Scenarios, ",") + " " + cfg.Split
		if cfg.Rollouts > 0 {
			s += fmt.Sprintf(", %d rollout%s", cfg.Rollouts, map[bool]string{true: "s"}[cfg.Rollouts > 1])
		}
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	if s := b.String(); len(s) > 120 {
		return s[:120] + "…"
	}
	return b.String()
}

// armRow is one (persuader, persuadee) row of a run's outcome table.
type armRow struct {
	Persuader, Persuadee string
	Episodes, Failed     int
	// Shares are the terminal states of outcomeCols over the scored
	// (non-failed) episodes, with Wilson 95% intervals.
	Shares []share
}

// outcomeCols are the outcome table's terminal columns.
var outcomeCols = append(slices.Clone(decision.Terminals), decision.TermTruncated)

// filterForm is the run page's filters, as read from and written to the
// query string.
type filterForm struct {
	Persuader, Persuadee, Terminal, Resistance, Family, Split, Scenario string
}

func (f filterForm) filter() store.Filter {
	return store.Filter{Persuader: f.Persuader, Persuadee: f.Persuadee, ScenarioID: f.Scenario,
		Terminal: decision.Terminal(f.Terminal), Resistance: scenario.Resistance(f.Resistance),
		Family: scenario.Family(f.Family), Split: scenario.Split(f.Split)}
}

// kv lists the filters as query parameters.
func (f filterForm) kv() []string {
	return []string{"persuader", f.Persuader, "persuadee", f.Persuadee, "terminal", f.Terminal,
		"resistance", f.Resistance, "family", f.Family, "split", f.Split, "scenario", f.Scenario}
}

// option is one choice of a select.
type option struct{ Value, Label string }

type episodeLink struct {
	store.EpisodeRow
	URL string
}

type runPage struct {
	head
	Run        store.Run
	Created    string
	Config     string
	Arms       []armRow
	Cols       []decision.Terminal
	Form       filterForm
	Persuaders []string
	Persuadees []string
	Terminals  []string
	Resists    []option
	Families   []string
	Splits     []string
	Episodes   []episodeLink
	Total      int
	From, To   int
	Prev, Next string
	CompareURL string
}

// pageSize is the episode list's page length.
const pageSize = 50

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	run, err := s.st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, http.StatusNotFound, "no run %s in %s", id, s.dbPath)
		return
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	q := r.URL.Query()
	f := filterForm{q.Get("persuader"), q.Get("persuadee"), q.Get("terminal"), q.Get("resistance"),
		q.Get("family"), q.Get("split"), q.Get("scenario")}
	page := 1
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 || page > maxPage {
			s.fail(w, http.StatusBadRequest, "page %q: want a number in [1, %d]", v, maxPage)
			return
		}
	}
	pcs, err := s.st.TerminalCounts(ctx, id)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	pg, err := s.st.EpisodePage(ctx, id, (page-1)*pageSize, pageSize, f.filter())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	p := runPage{head: head{Title: "Run " + id, DB: s.dbPath}, Run: run,
		Created: run.CreatedAt.UTC().Format(timeLayout), Config: indentConfig(run.Config),
		Cols: outcomeCols, Form: f, Total: pg.Total, CompareURL: query("/compare", "a", id)}
	if run.Status == store.StatusRunning {
		p.Refresh = 5
	}
	for _, pc := range pcs {
		a := armRow{Persuader: pc.Persuader, Persuadee: pc.Persuadee, Episodes: pc.Episodes, Failed: pc.Terminals[decision.TermFailed]}
		for _, c := range outcomeCols {
			a.Shares = append(a.Shares, newShare(pc.Terminals[c], pc.Episodes-a.Failed))
		}
		p.Arms = append(p.Arms, a)
		if !slices.Contains(p.Persuaders, pc.Persuader) {
			p.Persuaders = append(p.Persuaders, pc.Persuader)
		}
		if !slices.Contains(p.Persuadees, pc.Persuadee) {
			p.Persuadees = append(p.Persuadees, pc.Persuadee)
		}
	}
	slices.Sort(p.Persuadees)
	for _, t := range append(slices.Clone(outcomeCols), decision.TermFailed) {
		p.Terminals = append(p.Terminals, string(t))
	}
	for _, r := range scenario.Resistances {
		p.Resists = append(p.Resists, option{string(r), string(r) + " " + resistanceNames[r]})
	}
	for _, fm := range scenario.Families {
		p.Families = append(p.Families, string(fm))
	}
	for _, sp := range scenario.Splits {
		p.Splits = append(p.Splits, string(sp))
	}
	for _, row := range pg.Rows {
		p.Episodes = append(p.Episodes, episodeLink{row, episodeURL(id, row.Key())})
	}
	if len(pg.Rows) > 0 {
		p.From, p.To = (page-1)*pageSize+1, (page-1)*pageSize+len(pg.Rows)
	}
	base := "/runs/" + id
	if page > 1 {
		p.Prev = query(base, append(f.kv(), "page", strconv.Itoa(page-1))...)
	}
	if page*pageSize < pg.Total {
		p.Next = query(base, append(f.kv(), "page", strconv.Itoa(page+1))...)
	}
	s.render(w, http.StatusOK, "run", p)
}

// resistanceNames spell out the resistance codes (scenario.Resistance).
var resistanceNames = map[scenario.Resistance]string{
	scenario.EntrenchedBelief: "entrenched belief", scenario.IdentityThreat: "identity threat",
	scenario.AutonomyResistance: "autonomy resistance", scenario.AmbivalentAvoidance: "ambivalent avoidance",
}

// episodeURL is the address of an episode's page.
func episodeURL(runID string, k episode.Key) string {
	return query("/runs/"+runID+"/episode", "k", k.String())
}

// indentConfig is a run configuration as indented JSON ("" for none).
func indentConfig(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
