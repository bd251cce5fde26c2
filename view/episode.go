package view

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// turnRow is one turn of an episode's timeline.
type turnRow struct {
	episode.Turn
	Probes             string
	Belief, Dense      string
	PersuaderTokens    string
	PersuadeeTokens    string
	ProbeTokens        string
	PersuaderLatency   string
	PersuadeeLatency   string
	ProbeLatency       string
	DecisionIsTerminal bool
}

// episodeView is an episode as the episode and pair pages show it.
type episodeView struct {
	Ep      *episode.Episode
	Key     string
	Initial string
	B0      string
	Turns   []turnRow
	Chart   template.HTML
	// Reward components: R_goal, R_strategy (when judged), the outcome
	// reward R_out = R_goal + w·R_strategy (w = reward.DefaultStrategyWeight)
	// and the sum of the dense rewards r_t.
	RGoal, RStrategy, ROut, DenseSum string
	Judged                           bool
	JudgeCost                        string
}

func newEpisodeView(ep *episode.Episode) episodeView {
	v := episodeView{Ep: ep, Key: episode.KeyOf(ep).String(), Initial: readings(ep.Initial), B0: f3(ep.B0),
		Chart: beliefChart(ep), RGoal: fmt.Sprintf("%+.2f", ep.RGoal), RStrategy: sf3(ep.RStrategy),
		ROut:   fmt.Sprintf("%+.3f", ep.OutcomeReward(reward.DefaultStrategyWeight)),
		Judged: ep.RStrategy != nil || ep.JudgeError != "" || ep.ActsBy != ""}
	var dense float64
	var nd int
	for _, t := range ep.Turns {
		if t.Dense != nil {
			dense += *t.Dense
			nd++
		}
		v.Turns = append(v.Turns, turnRow{Turn: t, Probes: readings(t.Probes), Belief: f3(t.Belief), Dense: sf3(t.Dense),
			PersuaderTokens: tokens(t.PersuaderUsage), PersuadeeTokens: tokens(t.PersuadeeUsage), ProbeTokens: tokens(t.ProbeUsage),
			PersuaderLatency: ms(t.PersuaderMS), PersuadeeLatency: ms(t.PersuadeeMS), ProbeLatency: ms(t.ProbeMS),
			DecisionIsTerminal: t.Decision.Terminal()})
	}
	v.DenseSum = "-"
	if nd > 0 {
		v.DenseSum = fmt.Sprintf("%+.3f over %d turns", dense, nd)
	}
	if ep.JudgeMS > 0 || ep.JudgeUsage.Requests > 0 {
		v.JudgeCost = ms(ep.JudgeMS) + ", " + tokens(ep.JudgeUsage)
	}
	return v
}

// readings formats probe read-outs as "CA 0.500 · PE - · AC 0.250" ("-":
// unreadable).
func readings(rs []probe.Reading) string {
	var parts []string
	for _, r := range rs {
		v := "-"
		if r.OK {
			v = fmt.Sprintf("%.3f", r.P)
		}
		parts = append(parts, strings.ToUpper(r.Probe)+" "+v)
	}
	if parts == nil {
		return "-"
	}
	return strings.Join(parts, " · ")
}

// tokens formats a call's usage as "prompt→completion tok (cached c)";
// "-" when the role reports none (the simulator, built-in persuaders).
func tokens(u episode.Usage) string {
	if u == (episode.Usage{}) {
		return "-"
	}
	s := fmt.Sprintf("%d→%d tok", u.PromptTokens, u.CompletionTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (cached %d)", u.CachedTokens)
	}
	return s
}

// ms formats milliseconds.
func ms(x float64) string {
	if x == 0 {
		return "-"
	}
	if x >= 1000 {
		return fmt.Sprintf("%.2f s", x/1000)
	}
	return fmt.Sprintf("%.1f ms", x)
}

type episodePage struct {
	head
	RunID   string
	RunURL  string
	View    episodeView
	Public  *scenario.Public
	Hidden  *scenario.HiddenProfile
	NoScene string
}

// loadEpisode reads run runID's episode with key k. Errors:
// store.ErrNotFound for an unknown run or episode; the store's.
func (s *Server) loadEpisode(ctx context.Context, runID string, k episode.Key) (*episode.Episode, error) {
	eps, err := s.st.Episodes(ctx, runID, store.Filter{Persuader: k.Persuader, Persuadee: k.Persuadee, ScenarioID: k.ScenarioID})
	if err != nil {
		return nil, err
	}
	for _, ep := range eps {
		if ep.Rollout == k.Rollout {
			return ep, nil
		}
	}
	return nil, fmt.Errorf("run %s has no episode %s: %w", runID, k, store.ErrNotFound)
}

func (s *Server) handleEpisode(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	k, err := episode.ParseKey(r.URL.Query().Get("k"))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	run, err := s.st.GetRun(ctx, id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	ep, err := s.loadEpisode(ctx, id, k)
	if err != nil {
		s.storeError(w, err)
		return
	}
	p := episodePage{head: head{Title: "Episode " + k.String(), DB: s.dbPath}, RunID: id, RunURL: "/runs/" + id,
		View: newEpisodeView(ep)}
	rs := s.setsOf(run)
	if sc := rs.byID[ep.ScenarioID]; sc != nil {
		pub := sc.Public()
		p.Public, p.Hidden = &pub, &sc.Hidden
	} else if rs.err != nil {
		p.NoScene = rs.err.Error()
	} else {
		p.NoScene = fmt.Sprintf("scenario %s is not in the run's sets", ep.ScenarioID)
	}
	s.render(w, http.StatusOK, "episode", p)
}

// storeError renders a store error: 404 for store.ErrNotFound, 500
// otherwise.
func (s *Server) storeError(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, http.StatusNotFound, "%v", err)
		return
	}
	s.fail(w, http.StatusInternalServerError, "%v", err)
}
