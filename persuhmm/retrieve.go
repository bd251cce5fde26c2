package persuhmm

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/persuarena/persuarena/embed"
)

// Subtree is the part of the memory retrieved for one task: its domains
// (after back-off), their strategies and the macro-strategies they fall
// under.
type Subtree struct {
	Domains    []string        `json:"domains"`
	Strategies []*Strategy     `json:"strategies"`
	Macros     []MacroStrategy `json:"macros,omitempty"`
}

// Text renders the subtree as the tree domain → category → strategy for
// prompts, each strategy with its id and validity.
func (s Subtree) Text() string {
	if len(s.Strategies) == 0 {
		return "(no strategies learned yet)"
	}
	var b strings.Builder
	for _, d := range s.Domains {
		fmt.Fprintf(&b, "Domain: %s\n", d)
		for _, c := range Categories {
			first := true
			for _, st := range s.Strategies {
				if st.Domain != d || st.Category != c {
					continue
				}
				if first {
					fmt.Fprintf(&b, "  %s:\n", c)
					first = false
				}
				fmt.Fprintf(&b, "    [%s] %s (validity %.2f)\n", st.ID, st.Text, st.Validity())
			}
		}
	}
	for _, m := range s.Macros {
		fmt.Fprintf(&b, "Macro-strategy [%s] over %s: %s\n", m.ID, strings.Join(m.Members, ", "), m.Text)
	}
	return b.String()
}

// RetrieveOptions control Retrieve.
type RetrieveOptions struct {
	// Sparse is the strategy count below which a domain is sparse and
	// its sibling domains are pulled in; 0 means DefaultSparse.
	Sparse int
	// TopK, when > 0, keeps only the k strategies most similar to the
	// task (for persuaders with short contexts).
	TopK int
	// Hierarchy uses macro domains for back-off and pulls in the
	// macro-strategy subtree of every selected strategy. Without it (the
	// no-hierarchy ablation) back-off takes the single nearest domain by
	// embedding and top-k selection stays flat.
	Hierarchy bool
}

// DefaultSparse is RetrieveOptions.Sparse's default.
//
// Choice: the PersuHMM paper does not say when a domain is sparse; a
// domain with fewer than 3 strategies (one per category) is.
const DefaultSparse = 3

// Retrieve returns the subtree for task (PersuHMM paper §3.1): the union
// of the strategies of the task's domains; for a sparse or unknown
// domain, the strategies of its siblings (the other domains of its macro
// domain; with no macro domain or without Hierarchy, the domain whose
// name embeds nearest the task's domain name); with TopK, the k
// strategies whose embeddings are most similar to the task text, and
// with Hierarchy every strategy under the macro-strategy of a selected
// one. Strategies come in memory order (domain, then insertion).
// Errors: the encoder's.
func (m *Memory) Retrieve(ctx context.Context, enc embed.Encoder, task Task, opt RetrieveOptions) (Subtree, error) {
	if opt.Sparse <= 0 {
		opt.Sparse = DefaultSparse
	}
	doms := slices.Clone(task.Domains)
	for _, d := range task.Domains {
		dm := m.Domain(d)
		if dm != nil && len(dm.Strategies) >= opt.Sparse {
			continue
		}
		sib, err := m.siblings(ctx, enc, d, opt.Hierarchy)
		if err != nil {
			return Subtree{}, err
		}
		for _, s := range sib {
			if !slices.Contains(doms, s) {
				doms = append(doms, s)
			}
		}
	}
	var sub Subtree
	for _, d := range doms {
		if dm := m.Domain(d); dm != nil && len(dm.Strategies) > 0 {
			sub.Domains = append(sub.Domains, d)
			sub.Strategies = append(sub.Strategies, dm.Strategies...)
		}
	}
	if opt.TopK > 0 && len(sub.Strategies) > opt.TopK {
		texts := []string{task.Text()}
		for _, s := range sub.Strategies {
			texts = append(texts, s.Text)
		}
		vs, err := enc.Encode(ctx, texts)
		if err != nil {
			return Subtree{}, fmt.Errorf("persuhmm: retrieve: %w", err)
		}
		order := make([]int, len(sub.Strategies))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			return cosine(vs[0], vs[1+order[a]]) > cosine(vs[0], vs[1+order[b]])
		})
		keep := map[string]bool{}
		for _, i := range order[:opt.TopK] {
			keep[sub.Strategies[i].ID] = true
		}
		if opt.Hierarchy {
			for _, i := range order[:opt.TopK] {
				if mac := sub.Strategies[i].Macro; mac != "" {
					for _, s := range sub.Strategies {
						if s.Macro == mac {
							keep[s.ID] = true
						}
					}
				}
			}
		}
		sub.Strategies = slices.DeleteFunc(sub.Strategies, func(s *Strategy) bool { return !keep[s.ID] })
		sub.Domains = slices.DeleteFunc(sub.Domains, func(d string) bool {
			return !slices.ContainsFunc(sub.Strategies, func(s *Strategy) bool { return s.Domain == d })
		})
	}
	if opt.Hierarchy {
		for _, d := range sub.Domains {
			for _, mac := range m.Domain(d).Macros {
				if slices.ContainsFunc(sub.Strategies, func(s *Strategy) bool { return s.Macro == mac.ID }) {
					sub.Macros = append(sub.Macros, mac)
				}
			}
		}
	}
	return sub, nil
}

// siblings returns the back-off domains of d.
func (m *Memory) siblings(ctx context.Context, enc embed.Encoder, d string, hier bool) ([]string, error) {
	if hier {
		for _, md := range m.MacroDomains {
			if slices.Contains(md.Domains, d) {
				return slices.DeleteFunc(slices.Clone(md.Domains), func(x string) bool { return x == d }), nil
			}
		}
	}
	// nearest domain by name embedding (an unknown domain, or no macro
	// domains): with hierarchy, all domains of the nearest one's macro
	// domain.
	var cands []string
	for _, dm := range m.Domains {
		if dm.Name != d && len(dm.Strategies) > 0 {
			cands = append(cands, dm.Name)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	vs, err := enc.Encode(ctx, append([]string{d}, cands...))
	if err != nil {
		return nil, fmt.Errorf("persuhmm: back-off: %w", err)
	}
	best := 0
	for i := range cands {
		if cosine(vs[0], vs[1+i]) > cosine(vs[0], vs[1+best]) {
			best = i
		}
	}
	near := cands[best]
	if hier {
		for _, md := range m.MacroDomains {
			if slices.Contains(md.Domains, near) {
				return slices.DeleteFunc(slices.Clone(md.Domains), func(x string) bool { return x == d }), nil
			}
		}
	}
	return []string{near}, nil
}
