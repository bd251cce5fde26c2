package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// The roles of a cost row.
const (
	CostPersuader = "persuader"
	CostReply     = "reply"
	CostProbes    = "probes"
	// CostInitialProbes is the t = 0 probe read-out (before the first
	// turn; Episode.InitialProbeUsage).
	CostInitialProbes = "probes t=0"
	// CostJudge is the episode judge (R_strategy and, with --judge-acts,
	// act tagging; Episode.JudgeUsage).
	CostJudge = "judge"
)

// CostRow holds the Probe-RPO paper's Table 4 columns for one role of one
// (persuader, persuadee) pair: engine cost per persuader turn, as means over
// every recorded turn (failed episodes included: their cost was paid).
// Tokens are counts, LatencyMS milliseconds. Costs paid once per episode
// (the t = 0 read-out, the judge) are spread over the same turns, so the
// rows of a pair add up to its whole engine cost per turn.
type CostRow struct {
	Persuader string `json:"persuader"`
	Persuadee string `json:"persuadee"`
	// Role is CostPersuader (the persuader's utterance), CostReply (the
	// persuadee's visible reply, repairs and any terminal-state judge
	// included), CostProbes (the K probe read-out after the reply),
	// CostInitialProbes (the read-out at t = 0) or CostJudge (the episode
	// judge).
	Role string `json:"role"`
	// Turns is the number of turns averaged.
	Turns int `json:"turns"`
	// Requests, PromptTokens (every request's prompt counted whole: Table
	// 4's "without prefix cache" count for probes), CachedTokens (the part
	// of PromptTokens the engine served from its prefix cache, as it
	// reports it; 0 when it does not), DecodedTokens and LatencyMS are
	// per-turn means.
	Requests     float64 `json:"requests"`
	PromptTokens float64 `json:"prompt_tokens"`
	// PromptOnce is, for the probe rows, the per-turn mean of the prompt
	// tokens with each read-out's shared prefix (the K forks' common
	// context) counted once: Table 4's "with cache" count, the same
	// whatever the engine's cache held (episode.Usage.PromptOnceTokens).
	// Where some read-outs lack the figure (a retried or refused request)
	// it is their mean over the OnceKnown read-outs that have it, times the
	// Readouts that sent a prompt, per turn. nil for other rows and when no
	// read-out has it (the chat probe path, an engine without a
	// tokenizer).
	PromptOnce *float64 `json:"prompt_once_tokens"`
	// Readouts counts the row's read-outs that sent a prompt, OnceKnown
	// those with a prefix-once figure (probe rows only).
	Readouts      int     `json:"readouts,omitempty"`
	OnceKnown     int     `json:"once_known,omitempty"`
	CachedTokens  float64 `json:"cached_tokens"`
	DecodedTokens float64 `json:"decoded_tokens"`
	LatencyMS     float64 `json:"latency_ms"`
}

// CostTable computes per-turn engine costs (Probe-RPO paper, Table 4) for every
// (persuader, persuadee) pair and role that made engine requests; roles
// with no requests (the simulator, built-in persuaders, no judge) get no
// row. Every row of a pair divides by the pair's number of recorded turns:
// the t = 0 read-out and the judge, paid once per episode, are spread over
// the episode's turns (a pair with no turns at all gets no rows). Rows are
// ordered by persuadee, persuader, then persuader / reply / probes /
// probes t=0 / judge. It returns nil when no role used an engine.
func CostTable(eps []*episode.Episode) []CostRow {
	type acc struct {
		u  episode.Usage
		ms float64
		// readouts sent a prompt; known of them have a prefix-once
		// count, whose sum is once.
		readouts, known, once int
	}
	type key struct{ per, pee, role string }
	type pair struct{ per, pee string }
	sums := map[key]*acc{}
	turns := map[pair]int{}
	var keys []key
	add := func(k key, u episode.Usage, ms float64) {
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
			keys = append(keys, k)
		}
		a.u = a.u.Add(u)
		a.ms += ms
		if u.PromptTokens > 0 {
			a.readouts++
			if u.PromptOnceTokens > 0 {
				a.known++
				a.once += u.PromptOnceTokens
			}
		}
	}
	for _, ep := range eps {
		turns[pair{ep.Persuader, ep.Persuadee}] += len(ep.Turns)
		add(key{ep.Persuader, ep.Persuadee, CostInitialProbes}, ep.InitialProbeUsage, ep.InitialProbeMS)
		add(key{ep.Persuader, ep.Persuadee, CostJudge}, ep.JudgeUsage, ep.JudgeMS)
		for _, t := range ep.Turns {
			add(key{ep.Persuader, ep.Persuadee, CostPersuader}, t.PersuaderUsage, t.PersuaderMS)
			add(key{ep.Persuader, ep.Persuadee, CostReply}, t.PersuadeeUsage, t.PersuadeeMS)
			add(key{ep.Persuader, ep.Persuadee, CostProbes}, t.ProbeUsage, t.ProbeMS)
		}
	}
	order := map[string]int{CostPersuader: 0, CostReply: 1, CostProbes: 2, CostInitialProbes: 3, CostJudge: 4}
	slices.SortFunc(keys, func(a, b key) int {
		if a.pee != b.pee {
			return cmpStr(a.pee, b.pee)
		}
		if a.per != b.per {
			return cmpStr(a.per, b.per)
		}
		return order[a.role] - order[b.role]
	})
	var rows []CostRow
	for _, k := range keys {
		a, nt := sums[k], turns[pair{k.per, k.pee}]
		if a.u.Requests == 0 || nt == 0 {
			continue
		}
		n := float64(nt)
		r := CostRow{Persuader: k.per, Persuadee: k.pee, Role: k.role, Turns: nt,
			Requests: float64(a.u.Requests) / n, PromptTokens: float64(a.u.PromptTokens) / n,
			CachedTokens: float64(a.u.CachedTokens) / n, DecodedTokens: float64(a.u.CompletionTokens) / n, LatencyMS: a.ms / n}
		if k.role == CostProbes || k.role == CostInitialProbes {
			r.Readouts, r.OnceKnown = a.readouts, a.known
			if a.known > 0 {
				once := float64(a.once) / float64(a.known) * float64(a.readouts) / n
				r.PromptOnce = &once
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteCostTable writes cost rows as an aligned text table with a title
// and a line saying which prompt count is which.
func WriteCostTable(w io.Writer, rows []CostRow) error {
	fmt.Fprintln(w, "engine cost per persuader turn (means; the Probe-RPO paper's Table 4 columns):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "persuader\tpersuadee\trole\tturns\trequests\tprompt tok\tprefix-once tok\tcached tok\tdecoded tok\tms\t")
	for _, r := range rows {
		once := "-"
		if r.PromptOnce != nil {
			once = strconv.FormatFloat(*r.PromptOnce, 'f', 0, 64)
			if r.OnceKnown < r.Readouts {
				once += fmt.Sprintf(" (%d of %d)", r.OnceKnown, r.Readouts)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.0f\t%s\t%.0f\t%.1f\t%.0f\t\n", r.Persuader, r.Persuadee, r.Role, r.Turns,
			r.Requests, r.PromptTokens, once, r.CachedTokens, r.DecodedTokens, r.LatencyMS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "prompt tok: every request's prompt in full (Table 4 without prefix cache); prefix-once tok: a probe read-out's K forks with their shared context counted once (Table 4 with cache; \"(k of n)\": from the k read-outs that have it); cached tok: what the engine reports it served from its prefix cache.")
	return err
}

// Grid is the Probe-RPO paper's Table 7: the full-acceptance rate of every
// persuader against every persuadee, pooled over scenario sets.
type Grid struct {
	Persuaders []string `json:"persuaders"`
	Persuadees []string `json:"persuadees"`
	// Accept[i][j] is persuader i's full-acceptance share in [0, 1]
	// against persuadee j over scored (non-failed) episodes; NaN when there
	// are none. N[i][j] counts those episodes.
	Accept [][]float64 `json:"-"`
	N      [][]int     `json:"n"`
}

// CrossGrid builds the Table 7 grid for the given persuader and persuadee
// names (rows and columns in that order) from a run's episodes.
func CrossGrid(eps []*episode.Episode, persuaders, persuadees []string) Grid {
	g := Grid{Persuaders: persuaders, Persuadees: persuadees}
	acc := make([][]int, len(persuaders))
	g.N = make([][]int, len(persuaders))
	g.Accept = make([][]float64, len(persuaders))
	for i := range persuaders {
		acc[i] = make([]int, len(persuadees))
		g.N[i] = make([]int, len(persuadees))
		g.Accept[i] = make([]float64, len(persuadees))
	}
	for _, ep := range eps {
		i, j := slices.Index(persuaders, ep.Persuader), slices.Index(persuadees, ep.Persuadee)
		if i < 0 || j < 0 || ep.Terminal == decision.TermFailed {
			continue
		}
		g.N[i][j]++
		if ep.Terminal == decision.TermAccept {
			acc[i][j]++
		}
	}
	for i := range persuaders {
		for j := range persuadees {
			g.Accept[i][j] = math.NaN()
			if g.N[i][j] > 0 {
				g.Accept[i][j] = float64(acc[i][j]) / float64(g.N[i][j])
			}
		}
	}
	return g
}

// WriteGrid writes the grid as a text table of full-acceptance percentages
// (one decimal, "-" for empty cells), persuaders down, persuadees across.
func WriteGrid(w io.Writer, g Grid) error {
	fmt.Fprintln(w, "full acceptance % (persuader x persuadee; Probe-RPO paper, Table 7):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "persuader\t")
	for _, p := range g.Persuadees {
		fmt.Fprint(tw, p, "\t")
	}
	fmt.Fprintln(tw)
	for i, per := range g.Persuaders {
		fmt.Fprint(tw, per, "\t")
		for j := range g.Persuadees {
			fmt.Fprint(tw, pct(g.Accept[i][j])+" (n="+strconv.Itoa(g.N[i][j])+")", "\t")
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
