// Package roles is the one registry that turns the role names of every
// persuarena command (eval, train, selfplay, masp eval, serve, fidelity,
// study) into persuaders, persuadees and LLM judges.
//
// Names are of four kinds:
//
//	sim[-variant][:CONFIG][+reader=READER]
//	                        the seeded simulator: sim (its shipped P4G fit),
//	                        sim-soft, sim-hard, sim-hand (the hand-set
//	                        parameters) or sim:FILE (a simulator config file;
//	                        docs/simulator/parameters.md), perceiving messages with the
//	                        embedded reader or, with +reader=llm:ROLE, an
//	                        LLM role (package perception). Persuadees only.
//	NAME                    a built-in persuader of package baseline
//	                        (pushy, informer, script, random). Persuaders only.
//	planner:CHECKPOINT      a planner checkpoint written by persuarena train or
//	                        selfplay; its arm is named "planner:NAME@HASH"
//	                        (planner.Checkpoint.ArmName), never by file path.
//	                        Persuaders only.
//	hmm:MEMORY              a PersuHMM memory file (persuarena memory learn);
//	                        its persuader is named "hmm:BASENAME". Persuaders only.
//	llm:ROLE                a role (or backend) of the --config file
//	                        (docs/llm-roles.md); persuader, persuadee or judge.
//
// A Registry keeps one llm.Client per backend, so every role on a backend
// shares its in-flight bound, circuit breaker and capability detection, and
// it records what a run stores about its LLM roles (names and models, never
// keys). Preflight checks every backend in use before a run starts.
package roles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/persuhmm"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/sim"
)

// Prefixes of the role kinds that carry an argument.
const (
	// LLMPrefix marks a role of the --config file: llm:ROLE.
	LLMPrefix = "llm:"
	// PlannerPrefix marks a planner checkpoint: planner:CHECKPOINT.
	PlannerPrefix = "planner:"
)

// ErrUnknown is wrapped by every error about a name of no known kind.
var ErrUnknown = errors.New("unknown role")

// PersuaderKinds and PersuadeeKinds describe the accepted names, for help
// texts and errors.
var (
	PersuaderKinds = "built-in persuaders (" + strings.Join(baseline.Listed(), ", ") + "), planner:CHECKPOINT, hmm:MEMORY (a PersuHMM memory file), llm:ROLE (a role of --config)"
	PersuadeeKinds = "sim, sim-soft, sim-hard, sim-hand, sim:FILE (a simulator config file), each optionally +reader=llm:ROLE (an LLM reads the persuader's messages for the simulator), llm:ROLE (a role of --config)"
)

// unknownError is the error about a name of no known kind; it matches
// ErrUnknown.
type unknownError string

func (e unknownError) Error() string        { return string(e) }
func (e unknownError) Is(target error) bool { return target == ErrUnknown }

// LLMInfo is what a run stores about one resolved LLM role: its reference,
// backend, engine and model; never keys.
type LLMInfo struct {
	Ref     string     `json:"ref"`
	Backend string     `json:"backend"`
	Engine  llm.Engine `json:"engine"`
	Model   string     `json:"model"`
}

// Registry resolves role names against one loaded --config file (or none).
// It is safe for concurrent use.
type Registry struct {
	path    string
	cfg     *llm.Config
	mu      sync.Mutex
	clients map[string]*llm.Client
	order   []string // backends in first-use order (Preflight's order)
	pees    []*llmagent.Persuadee
	info    []LLMInfo
}

// New returns a registry over the --config file at configPath; an empty
// path gives a registry without LLM roles (llm:ROLE names then fail with
// an error asking for --config). Errors: llm.LoadConfig's, naming the file.
func New(configPath string) (*Registry, error) {
	r := &Registry{path: configPath, clients: map[string]*llm.Client{}}
	if configPath == "" {
		return r, nil
	}
	cfg, err := llm.LoadConfig(configPath)
	if err != nil {
		return nil, err
	}
	r.cfg = cfg
	return r, nil
}

// IsLLM reports whether name is an llm:ROLE reference.
func IsLLM(name string) bool { return strings.HasPrefix(name, LLMPrefix) }

// IsSim reports whether name is a simulator persuadee (sim, its variants,
// sim-hand or sim:FILE, with or without a +reader= suffix).
func IsSim(name string) bool {
	name, _ = perception.SplitName(name)
	return slices.Contains(sim.Names, name) || name == sim.HandName || sim.IsFileRef(name)
}

// PlannerPath returns the checkpoint path of a planner:CHECKPOINT name and
// whether name is one.
func PlannerPath(name string) (string, bool) { return strings.CutPrefix(name, PlannerPrefix) }

// Role looks up ref ("llm:ROLE") in the config and returns the role and
// the shared client of its backend, recording the role in LLM. Errors: no
// --config, an unknown role or backend (naming the file), or a backend
// that cannot be configured.
func (r *Registry) Role(ref string) (llm.Role, *llm.Client, error) {
	name, ok := strings.CutPrefix(ref, LLMPrefix)
	if !ok {
		return llm.Role{}, nil, fmt.Errorf("%q: want llm:ROLE, a role of --config", ref)
	}
	if r.cfg == nil {
		return llm.Role{}, nil, fmt.Errorf("%s needs --config persuarena.yaml naming its role and backend (docs/llm-roles.md)", ref)
	}
	role, b, err := r.cfg.Role(name)
	if err != nil {
		return llm.Role{}, nil, fmt.Errorf("%s: %s: %w", ref, r.path, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.clients[b.Name]
	if c == nil {
		if c, err = llm.NewClient(b); err != nil {
			return llm.Role{}, nil, fmt.Errorf("%s: %w", ref, err)
		}
		r.clients[b.Name] = c
		r.order = append(r.order, b.Name)
	}
	r.info = append(r.info, LLMInfo{Ref: ref, Backend: b.Name, Engine: b.Engine, Model: b.Model})
	return role, c, nil
}

// Persuader resolves one persuader name: a built-in, planner:CHECKPOINT,
// hmm:MEMORY or llm:ROLE. Errors: an unknown name (wrapping ErrUnknown and listing the
// kinds), an unreadable checkpoint, or Role's errors.
func (r *Registry) Persuader(name string) (episode.Persuader, error) {
	if IsLLM(name) {
		role, c, err := r.Role(name)
		if err != nil {
			return nil, err
		}
		return llmagent.NewPersuader(name, c, role), nil
	}
	if path, ok := PlannerPath(name); ok {
		return planner.LoadPlanner(path)
	}
	if path, ok := strings.CutPrefix(name, persuhmm.PersuaderPrefix); ok {
		return persuhmm.LoadPersuader(path)
	}
	if slices.Contains(baseline.Names(), name) {
		return baseline.New(name)
	}
	return nil, unknownError(fmt.Sprintf("unknown persuader %q (known kinds: %s)", name, PersuaderKinds))
}

// Persuaders resolves names in order; a name given twice is an error.
func (r *Registry) Persuaders(names []string) ([]episode.Persuader, error) {
	return resolveAll(names, "persuader", r.Persuader)
}

// Persuadee resolves one persuadee name: the simulator kinds or llm:ROLE.
// Errors: an unknown name (wrapping ErrUnknown and listing the kinds), a
// bad simulator config file, or Role's errors.
func (r *Registry) Persuadee(name string) (episode.Persuadee, error) {
	switch {
	case IsSim(name):
		base, reader := perception.SplitName(name)
		c, err := sim.ByName(base)
		if err != nil {
			return nil, err
		}
		p := sim.New(c)
		switch {
		case reader == "":
			return p, nil
		case reader == perception.EmbeddedName:
			c.Name = name // named as asked, so runs keep the two spellings apart
			return sim.New(c), nil
		case IsLLM(reader):
			role, cl, err := r.Role(reader)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return p.WithReader(perception.NewLLM(reader, cl, role)), nil
		}
		return nil, unknownError(fmt.Sprintf("persuadee %q: unknown reader %q (known: %s, llm:ROLE)", name, reader, perception.EmbeddedName))
	case IsLLM(name):
		role, c, err := r.Role(name)
		if err != nil {
			return nil, err
		}
		p := llmagent.NewPersuadee(name, c, role, llmagent.PersuadeeOptions{})
		r.mu.Lock()
		r.pees = append(r.pees, p)
		r.mu.Unlock()
		return p, nil
	}
	return nil, unknownError(fmt.Sprintf("unknown persuadee %q (known kinds: %s)", name, PersuadeeKinds))
}

// Persuadees resolves names in order; a name given twice is an error.
func (r *Registry) Persuadees(names []string) ([]episode.Persuadee, error) {
	return resolveAll(names, "persuadee", r.Persuadee)
}

func resolveAll[T any](names []string, what string, one func(string) (T, error)) ([]T, error) {
	out := make([]T, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("%s %q given twice", what, n)
		}
		seen[n] = true
		v, err := one(n)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Judge resolves an episode judge (R_strategy, act tagging; Probe-RPO
// paper) for ref = llm:ROLE with samples samples per question. Errors:
// Role's.
func (r *Registry) Judge(ref string, samples int) (*llmagent.Judge, error) {
	role, c, err := r.Role(ref)
	if err != nil {
		return nil, fmt.Errorf("--judge: %w", err)
	}
	return llmagent.NewJudge(ref, c, role, samples), nil
}

// MASPUsers resolves the user ensemble of the MASP paper's closed-loop
// evaluation: simulator persuadees get the rule-based success (rule) and
// rationality judges, llm:ROLE persuadees success read from their
// decisions and no rationality judge (q = 0 unless one is set later).
func (r *Registry) MASPUsers(names []string, rule masp.SuccessRule) ([]masp.User, error) {
	pees, err := r.Persuadees(names)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	out := make([]masp.User, len(names))
	for i, n := range names {
		out[i] = masp.User{Name: n, Persuadee: pees[i], Success: masp.SimSuccessJudge{Rule: rule}}
		if IsSim(n) {
			out[i].Rationality = masp.SimRationalityJudge{}
		}
	}
	return out, nil
}

// LLM returns what a run stores about the resolved LLM roles, in
// resolution order.
func (r *Registry) LLM() []LLMInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.info)
}

// UsesLLM reports whether any LLM role was resolved.
func (r *Registry) UsesLLM() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.info) > 0
}

// Preflight checks every backend a resolved role uses (llm.Client.
// Preflight: health, then the model list), in first-use order, and
// returns the first failure wrapping the underlying error (e.g.
// "connection refused"). With no LLM role it does nothing.
func (r *Registry) Preflight(ctx context.Context) error {
	r.mu.Lock()
	clients := make([]*llm.Client, len(r.order))
	for i, b := range r.order {
		clients[i] = r.clients[b]
	}
	r.mu.Unlock()
	for _, c := range clients {
		if err := c.Preflight(ctx); err != nil {
			return err
		}
	}
	return nil
}

// CheckProbes asks every LLM persuadee resolved so far whether its probes
// can be read (llmagent.Persuadee.CheckProbes), so that an engine without
// log-probabilities fails before a run starts, with an error naming
// --probes none. Errors: the first persuadee's.
func (r *Registry) CheckProbes(ctx context.Context) error {
	r.mu.Lock()
	pees := slices.Clone(r.pees)
	r.mu.Unlock()
	for _, p := range pees {
		if err := p.CheckProbes(ctx); err != nil {
			return err
		}
	}
	return nil
}

// WriteProtocol prints each LLM persuadee's decision-protocol counts for
// this process (replies, repairs, violations counted as continue, and the
// probe path).
func (r *Registry) WriteProtocol(w io.Writer) {
	r.mu.Lock()
	pees := slices.Clone(r.pees)
	r.mu.Unlock()
	for _, p := range pees {
		s := p.Stats()
		path := p.Path()
		if path == llmagent.ProbeAuto {
			path = "-"
		}
		fmt.Fprintf(w, "%s decision protocol: %d replies, %d repaired, %d violations (counted as continue; %d cut at the length limit); probes via %s\n",
			p.Name(), s.Replies, s.Repairs, s.Violations, s.Cut, path)
	}
}
