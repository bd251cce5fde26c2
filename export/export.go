// Package export turns a stored run into training data for offline and
// external trainers: every episode with its per-turn messages, persuasion
// acts, probe read-outs, belief, dense reward, terminal state, rewards and
// the Probe-RPO advantages of its group (Probe-RPO paper, Eq. 3, computed
// by package grpo), as JSON Lines (one episode per line) or Parquet (one
// row per turn). See docs/export.md for the field list.
//
// What is exported is what a persuader may learn from: the hidden profile
// (including the stored resistance type), run configurations, engine
// error messages, latencies and token usage are left out.
package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/store"
)

// ErrOptions is wrapped by the errors returned for bad Options or formats.
var ErrOptions = errors.New("invalid export options")

// Format is an output format.
type Format string

// The formats.
const (
	// JSONL writes one JSON object per episode per line, turns nested.
	JSONL Format = "jsonl"
	// Parquet writes one row per persuader turn, flat columns.
	Parquet Format = "parquet"
	// Episodes writes the stored episode records as JSON Lines (the
	// episode.Episode encoding: latencies, token usage, errors and the
	// resistance type included, no advantages): the full record that
	// "persuarena runs export --jsonl" writes for analysis. Its field
	// names are JSONL's for every field the two share.
	Episodes Format = "episodes"
)

// ParseFormat returns the Format named s ("jsonl", "parquet" or
// "episodes"); other values give an error wrapping ErrOptions.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case JSONL, Parquet, Episodes:
		return f, nil
	}
	return "", fmt.Errorf("%w: format %q, want jsonl, parquet or episodes", ErrOptions, s)
}

// Options configures Build.
type Options struct {
	// Config supplies λ (Lambda), ε (Eps), the std's ddof (StdDDOF) and
	// w_strategy (StrategyWeight) of the advantages (grpo.Config); its
	// training-loop fields are not used.
	Config grpo.Config
	// GroupSize splits each scenario's rollouts into groups of GroupSize
	// consecutive rollout indices (rollout / GroupSize), for training runs
	// that store several steps' groups of one scenario in one run; 0 (the
	// default) puts all rollouts of a scenario in one group.
	GroupSize int
}

// DefaultOptions returns grpo.DefaultConfig (λ 0.5) and one group per
// scenario.
func DefaultOptions() Options { return Options{Config: grpo.DefaultConfig()} }

// Validate checks the fields Build uses: GroupSize >= 0, and Lambda,
// Eps, StdDDOF and StrategyWeight in grpo.Config's ranges. Errors wrap
// ErrOptions (and grpo.ErrConfig for a config field).
func (o Options) Validate() error {
	if o.GroupSize < 0 {
		return fmt.Errorf("%w: group size %d, want >= 0", ErrOptions, o.GroupSize)
	}
	// Check the used fields only, with valid stand-ins for the others.
	c := grpo.DefaultConfig()
	c.Lambda, c.Eps, c.StdDDOF, c.StrategyWeight = o.Config.Lambda, o.Config.Eps, o.Config.StdDDOF, o.Config.StrategyWeight
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return nil
}

// Probe is one probe read-out.
type Probe struct {
	// Probe is the probe ID (e.g. "ca", "pe", "ac").
	Probe string `json:"probe" parquet:"probe"`
	// P is p_k = P(Yes)/(P(Yes)+P(No)) in [0, 1]; nil (null) when the
	// probe was unreadable: missing, never 0.
	P *float64 `json:"p" parquet:"p,optional"`
}

// Turn is one persuader turn and the persuadee's reply, with the turn's
// advantages.
type Turn struct {
	// T is the persuader turn index, 1..Tmax.
	T int `json:"t"`
	// PersuaderText is the persuader's utterance and PersuadeeText the
	// persuadee's visible reply (no decision line, no reasoning).
	PersuaderText string `json:"persuader"`
	PersuadeeText string `json:"persuadee"`
	// Decision is the persuadee's decision after this reply.
	Decision string `json:"decision"`
	// Acts are the tagged persuasion acts of the persuader utterance.
	Acts []string `json:"acts"`
	// Probes are the read-outs after the reply, in basis order.
	Probes []Probe `json:"probes"`
	// Belief is B_t in [0, 1] and Dense r_t = B_t - B_{t-1} over the
	// probes readable at both turns; nil when missing (Probe-RPO paper).
	// DenseProbes is the number of probes Dense used when fewer than the
	// basis (episode.Turn.DenseProbes; omitted when all), so a trainer can
	// mask or weight such turns.
	Belief      *float64 `json:"belief"`
	Dense       *float64 `json:"dense"`
	DenseProbes int      `json:"dense_probes,omitempty"`
	// AOut is the episode's A_out, ADense is A_dense_{i,t} (unscaled)
	// and Advantage is A_{i,t} = A_out + λ·A_dense (grpo.Analyze).
	AOut      float64 `json:"a_out"`
	ADense    float64 `json:"a_dense"`
	Advantage float64 `json:"advantage"`
}

// Episode is one exported episode: a JSONL line.
type Episode struct {
	// RunID, Persuader, Persuadee and ScenarioID identify the episode
	// (with Rollout).
	RunID      string `json:"run_id"`
	Persuader  string `json:"persuader"`
	Persuadee  string `json:"persuadee"`
	ScenarioID string `json:"scenario_id"`
	// Rollout is the 0-based rollout index within the scenario.
	Rollout int `json:"rollout"`
	// Seed is the episode seed (episode.Seed).
	Seed uint64 `json:"seed"`
	// Split, Family and Domain are public scenario fields.
	Split  string `json:"split"`
	Family string `json:"family"`
	Domain string `json:"domain"`
	// Group names the episode's GRPO group:
	// "persuader/persuadee/scenario", plus "#k" for block k when
	// Options.GroupSize > 0. GroupSize counts its episodes (failed ones
	// included). Dead and Separated are its grpo.GroupStats.
	Group     string `json:"group"`
	GroupSize int    `json:"group_size"`
	Dead      bool   `json:"dead"`
	Separated bool   `json:"separated"`
	// Lambda is the λ the advantages were computed with.
	Lambda float64 `json:"lambda"`
	// Terminal is the terminal state (decision.Terminal).
	Terminal string `json:"terminal"`
	// RGoal is R_goal and ROut the outcome reward R_out; both nil for a
	// failed episode, which has no reward.
	RGoal *float64 `json:"r_goal"`
	ROut  *float64 `json:"r_out"`
	// AOut is the episode's outcome advantage A_out (0 when failed).
	AOut float64 `json:"a_out"`
	// B0 is the belief before the first turn (nil when unreadable) and
	// Initial its probe read-outs.
	B0      *float64 `json:"b0"`
	Initial []Probe  `json:"initial"`
	Turns   []Turn   `json:"turns"`
	// Reward is the episode's reward vector from a reward spec (REPO
	// paper; eval --reward), nil without one; R_out is then its R.
	Reward *episode.RewardVector `json:"reward,omitempty"`
}

// Build computes every episode's export record, grouping by persuader,
// persuadee and scenario (and rollout / GroupSize when set) and running
// grpo.Analyze on each group. The result keeps eps' order (store.Episodes
// order: persuader, persuadee, scenario, rollout).
//
// R_out = R_goal + w·R_strategy (Episode.OutcomeReward, w =
// Config.StrategyWeight): the judge's rating where the episode has one
// (eval --judge), else R_goal. A failed episode
// (decision.TermFailed) has R_out NaN for grpo.Analyze, which leaves it
// out of its group and gives it zero advantages. A group with fewer than
// two scored episodes (e.g. an eval run with one rollout per scenario)
// gets zero advantages everywhere.
//
// Errors: ErrOptions (wrapped) when opt.Validate fails; an error naming the episode for a nil
// episode or an infinite reward.
func Build(eps []*episode.Episode, opt Options) ([]Episode, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	cfg := opt.Config
	var groups grpo.Groups[int]
	for i, ep := range eps {
		if ep == nil {
			return nil, fmt.Errorf("export: episode %d is nil", i)
		}
		k := grpo.KeyOf(ep, 0)
		if opt.GroupSize > 0 {
			k.Block = ep.Rollout / opt.GroupSize
		}
		groups.Add(k, i)
	}
	out := make([]Episode, len(eps))
	for _, k := range groups.Keys() {
		idx := groups.Members(k)
		name := k.Persuader + "/" + k.Persuadee + "/" + k.Scenario
		if opt.GroupSize > 0 {
			name += "#" + strconv.Itoa(k.Block)
		}
		g := make([]*episode.Episode, len(idx))
		for j, i := range idx {
			g[j] = eps[i]
		}
		rOut, dense := grpo.Inputs(g, func(ep *episode.Episode) float64 { return grpo.Outcome(ep, cfg.StrategyWeight) })
		parts, err := grpo.AnalyzeParts(rOut, dense, cfg)
		if err != nil {
			return nil, fmt.Errorf("export: group %s: %w", name, err)
		}
		st := parts.Stats
		for j, i := range idx {
			ep := eps[i]
			e := Episode{
				RunID: ep.RunID, Persuader: ep.Persuader, Persuadee: ep.Persuadee, ScenarioID: ep.ScenarioID,
				Rollout: ep.Rollout, Seed: ep.Seed, Split: string(ep.Split), Family: string(ep.Family),
				Domain: ep.Domain, Group: name, GroupSize: len(idx), Dead: st.Dead, Separated: st.Separated,
				Lambda: cfg.Lambda, Terminal: string(ep.Terminal), AOut: parts.Out[j],
				B0: copyPtr(ep.B0), Initial: probes(ep.Initial), Turns: make([]Turn, len(ep.Turns)), Reward: ep.Reward,
			}
			if !math.IsNaN(rOut[j]) {
				e.RGoal, e.ROut = ptr(ep.RGoal), ptr(rOut[j])
			}
			for t, tu := range ep.Turns {
				acts := tu.Acts
				if acts == nil {
					acts = []string{}
				}
				e.Turns[t] = Turn{
					T: tu.T, PersuaderText: tu.Persuader, PersuadeeText: tu.Persuadee,
					Decision: string(tu.Decision), Acts: append([]string{}, acts...), Probes: probes(tu.Probes),
					Belief: copyPtr(tu.Belief), Dense: copyPtr(tu.Dense), DenseProbes: tu.DenseProbes,
					AOut: parts.Out[j], ADense: parts.Dense[j][t], Advantage: parts.A[j][t],
				}
			}
			out[i] = e
		}
	}
	return out, nil
}

func ptr(x float64) *float64 { return &x }

func copyPtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

// probes converts stored read-outs; an unreadable probe gets P = nil.
func probes(rs []probe.Reading) []Probe {
	ps := make([]Probe, len(rs))
	for i, r := range rs {
		ps[i].Probe = r.Probe
		if r.OK {
			ps[i].P = ptr(r.P)
		}
	}
	return ps
}

// WriteJSONL writes eps to w, one compact JSON object per line
// (encoding/json), in order.
func WriteJSONL(w io.Writer, eps []Episode) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range eps {
		if err := enc.Encode(&eps[i]); err != nil {
			return fmt.Errorf("export: episode %s#%d: %w", eps[i].Group, eps[i].Rollout, err)
		}
	}
	return nil
}

// WriteEpisodes writes eps to w in the Episodes format: one compact
// episode.Episode JSON object per line (encoding/json), in order.
func WriteEpisodes(w io.Writer, eps []*episode.Episode) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, ep := range eps {
		if err := enc.Encode(ep); err != nil {
			return fmt.Errorf("export: episode %s: %w", episode.KeyOf(ep), err)
		}
	}
	return bw.Flush()
}

// Run reads run runID from db (store.Episodes), builds its export
// (Build) and writes it to w in format f; Episodes writes the stored
// records as they are (opt is then not used). Parquet output carries the
// run ID, λ, ε, ddof and group size as file key/value metadata.
//
// Errors: store.ErrNotFound for an unknown run; ErrOptions; Build's and
// the writer's errors.
func Run(ctx context.Context, db store.Reader, runID string, f Format, w io.Writer, opt Options) error {
	if _, err := ParseFormat(string(f)); err != nil {
		return err
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	eps, err := db.Episodes(ctx, runID)
	if err != nil {
		return fmt.Errorf("export: run %s: %w", runID, err)
	}
	if f == Episodes {
		if err := WriteEpisodes(w, eps); err != nil {
			return fmt.Errorf("export: run %s: %w", runID, err)
		}
		return nil
	}
	recs, err := Build(eps, opt)
	if err != nil {
		return fmt.Errorf("export: run %s: %w", runID, err)
	}
	if f == JSONL {
		return WriteJSONL(w, recs)
	}
	return WriteParquet(w, recs, Metadata(runID, opt))
}

// Metadata returns the Parquet key/value metadata describing an export:
// persuarena.run_id, persuarena.lambda, persuarena.eps,
// persuarena.std_ddof, persuarena.group_size and
// persuarena.export_version ("1").
func Metadata(runID string, opt Options) map[string]string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return map[string]string{
		"persuarena.run_id":         runID,
		"persuarena.lambda":         g(opt.Config.Lambda),
		"persuarena.eps":            g(opt.Config.Eps),
		"persuarena.std_ddof":       strconv.Itoa(opt.Config.StdDDOF),
		"persuarena.group_size":     strconv.Itoa(opt.GroupSize),
		"persuarena.export_version": "1",
	}
}

// RunFile is Run writing to path atomically: into a temporary file in the
// same directory, synced, then renamed over path. On any error path is
// left untouched and the temporary file removed.
func RunFile(ctx context.Context, db store.Reader, runID string, f Format, path string, opt Options) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := Run(ctx, db, runID, f, tmp, opt); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("export: %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("export: %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export: %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// ToPath is Run to stdout when path is "" or "-", else RunFile to path.
func ToPath(ctx context.Context, db store.Reader, runID string, f Format, path string, stdout io.Writer, opt Options) error {
	if path == "" || path == "-" {
		return Run(ctx, db, runID, f, stdout, opt)
	}
	return RunFile(ctx, db, runID, f, path, opt)
}
