package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llmagent"
)

// llmPrefix marks an LLM role in --persuader / --persuadee: llm:NAME names
// a role (or a backend) of the --config file.
const llmPrefix = "llm:"

// llmRoleInfo is what a run stores about an LLM role: names and models,
// never keys (issue 3 §2).
type llmRoleInfo struct {
	Ref     string     `json:"ref"`
	Backend string     `json:"backend"`
	Engine  llm.Engine `json:"engine"`
	Model   string     `json:"model"`
}

// llmRoles resolves llm:NAME references against one loaded config, with
// one client per backend so every role on a backend shares its in-flight
// bound, circuit breaker and capability detection.
type llmRoles struct {
	path    string
	cfg     *llm.Config
	mu      sync.Mutex
	clients map[string]*llm.Client
	pees    []*llmagent.Persuadee
	info    []llmRoleInfo
}

// loadLLMRoles reads the --config file; an empty path gives nil (no LLM
// roles available).
func loadLLMRoles(path string) (*llmRoles, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := llm.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return &llmRoles{path: path, cfg: cfg, clients: map[string]*llm.Client{}}, nil
}

func isLLMRef(name string) bool { return strings.HasPrefix(name, llmPrefix) }

// role looks up ref ("llm:NAME") and the client of its backend.
func (r *llmRoles) role(ref string) (llm.Role, *llm.Client, error) {
	if r == nil {
		return llm.Role{}, nil, fmt.Errorf("%s needs --config persuarena.yaml naming its role and backend", ref)
	}
	name := strings.TrimPrefix(ref, llmPrefix)
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
	}
	r.info = append(r.info, llmRoleInfo{Ref: ref, Backend: b.Name, Engine: b.Engine, Model: b.Model})
	return role, c, nil
}

func (r *llmRoles) persuader(ref string) (episode.Persuader, error) {
	role, c, err := r.role(ref)
	if err != nil {
		return nil, err
	}
	return llmagent.NewPersuader(ref, c, role), nil
}

func (r *llmRoles) persuadee(ref string) (episode.Persuadee, error) {
	role, c, err := r.role(ref)
	if err != nil {
		return nil, err
	}
	p := llmagent.NewPersuadee(ref, c, role, llmagent.PersuadeeOptions{})
	r.mu.Lock()
	r.pees = append(r.pees, p)
	r.mu.Unlock()
	return p, nil
}

// judge resolves an episode judge (R_strategy, act tagging) for --judge.
func (r *llmRoles) judge(ref string, samples int) (*llmagent.Judge, error) {
	if !isLLMRef(ref) {
		return nil, fmt.Errorf("--judge %q: want llm:NAME, a role of --config", ref)
	}
	role, c, err := r.role(ref)
	if err != nil {
		return nil, err
	}
	return llmagent.NewJudge(ref, c, role, samples), nil
}

// used reports whether any LLM role was resolved.
func (r *llmRoles) used() bool { return r != nil && len(r.info) > 0 }

// writeProtocol prints each LLM persuadee's decision-protocol counts for
// this process (repairs and violations; violations count as continue).
func (r *llmRoles) writeProtocol(w io.Writer) {
	if r == nil {
		return
	}
	for _, p := range r.pees {
		s := p.Stats()
		path := p.Path()
		if path == llmagent.ProbeAuto {
			path = "-"
		}
		fmt.Fprintf(w, "%s decision protocol: %d replies, %d repaired, %d violations (counted as continue); probes via %s\n",
			p.Name(), s.Replies, s.Repairs, s.Violations, path)
	}
}
