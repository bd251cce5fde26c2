package persuhmm

import (
	"context"
	"fmt"
	"slices"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/llm"
)

// RefineOptions are the strategy refiner's limits.
type RefineOptions struct {
	// U is the per-domain strategy cap (0: DefaultU).
	U int
	// W is the per-strategy pattern cap (0: DefaultW).
	W int
	// Nd is the validation threshold N_d (0: DefaultNd; < 0: 0).
	Nd int
}

func (o RefineOptions) withDefaults() RefineOptions {
	if o.U <= 0 {
		o.U = DefaultU
	}
	if o.W <= 0 {
		o.W = DefaultW
	}
	if o.Nd == 0 {
		o.Nd = DefaultNd
	} else if o.Nd < 0 {
		o.Nd = 0
	}
	return o
}

// Refine is the strategy refiner (PersuHMM paper §3.2): for each new
// strategy, an identical one in its domain (r.Same) absorbs its success
// count and patterns and the new one is discarded; otherwise it is
// classified (r.Classify, unless it carries a category) and inserted.
// Then every domain above U strategies is reduced by Overflow. It returns
// the number inserted and merged.
//
// Choice: a new strategy starts with n_succ = n_d = the number of
// patterns it was abstracted from (those tasks are its domain's first
// occurrences for it), so it enters at V = 1 with little weight, and N_d
// keeps it from outranking validated strategies in overflow handling.
// A merge adds that count to n_succ only (Validity caps V at 1).
func (m *Memory) Refine(ctx context.Context, news []NewStrategy, r Refiner, enc embed.Encoder, opt RefineOptions) (inserted, merged int, usage llm.Usage, err error) {
	opt = opt.withDefaults()
	touched := map[string]bool{}
	for _, ns := range news {
		if ns.Domain == "" || ns.Text == "" {
			continue
		}
		d := m.EnsureDomain(ns.Domain)
		j, u, err := r.Same(ctx, ns, d.Strategies)
		usage = usage.Add(u)
		if err != nil {
			return inserted, merged, usage, fmt.Errorf("persuhmm: refiner: %w", err)
		}
		if j >= 0 && j < len(d.Strategies) {
			s := d.Strategies[j]
			s.Succ += max(1, len(ns.Patterns))
			for _, p := range ns.Patterns {
				if err := AddPattern(ctx, s, p, opt.W, enc); err != nil {
					return inserted, merged, usage, err
				}
			}
			merged++
			continue
		}
		c := ns.Category
		if _, ok := ParseCategory(string(c)); !ok {
			c, u, err = r.Classify(ctx, ns)
			usage = usage.Add(u)
			if err != nil {
				return inserted, merged, usage, fmt.Errorf("persuhmm: refiner: %w", err)
			}
		}
		k := max(1, len(ns.Patterns))
		s := &Strategy{ID: m.newID("s"), Text: ns.Text, Domain: ns.Domain, Category: c,
			Recipe: slices.Clone(ns.Recipe), Goal: ns.Goal, Succ: k, ND: k}
		for _, p := range ns.Patterns {
			if err := AddPattern(ctx, s, p, opt.W, enc); err != nil {
				return inserted, merged, usage, err
			}
		}
		d.Strategies = append(d.Strategies, s)
		touched[d.Name] = true
		inserted++
	}
	for _, d := range m.Domains {
		if !touched[d.Name] || len(d.Strategies) <= opt.U {
			continue
		}
		u, err := Overflow(ctx, d, r, opt.U, opt.Nd)
		usage = usage.Add(u)
		if err != nil {
			return inserted, merged, usage, err
		}
	}
	return inserted, merged, usage, nil
}

// Overflow reduces d to at most u strategies (PersuHMM paper §3.2): for
// each group of similar strategies (r.Groups) it keeps the one of highest
// validity among those with n_d > nd (ties: larger n_d, then earlier in
// the domain), or, when none has n_d > nd, the one with the largest n_d
// (ties: earlier); then, while more than u remain, it drops the strategy
// of lowest validity (ties: smaller n_d, then later in the domain).
//
// Choice: the paper removes strategies "until the total number falls
// below U"; U is kept as the cap (at most U remain), as the paper's
// Table 1 counts reach U.
func Overflow(ctx context.Context, d *Domain, r Refiner, u, nd int) (llm.Usage, error) {
	if len(d.Strategies) <= u {
		return llm.Usage{}, nil
	}
	groups, usage, err := r.Groups(ctx, d.Strategies)
	if err != nil {
		return usage, fmt.Errorf("persuhmm: overflow of %q: %w", d.Name, err)
	}
	drop := map[int]bool{}
	for _, g := range groups {
		g = slices.DeleteFunc(slices.Clone(g), func(i int) bool { return i < 0 || i >= len(d.Strategies) })
		if len(g) < 2 {
			continue
		}
		keep := -1
		for _, i := range g {
			s := d.Strategies[i]
			if s.ND <= nd {
				continue
			}
			if keep < 0 || better(s, d.Strategies[keep]) {
				keep = i
			}
		}
		if keep < 0 {
			for _, i := range g {
				if keep < 0 || d.Strategies[i].ND > d.Strategies[keep].ND {
					keep = i
				}
			}
		}
		for _, i := range g {
			if i != keep {
				drop[i] = true
			}
		}
	}
	var out []*Strategy
	for i, s := range d.Strategies {
		if !drop[i] {
			out = append(out, s)
		}
	}
	for len(out) > u {
		worst := 0
		for i := 1; i < len(out); i++ {
			a, b := out[i], out[worst]
			if a.Validity() < b.Validity() || a.Validity() == b.Validity() && a.ND <= b.ND {
				worst = i
			}
		}
		out = slices.Delete(out, worst, worst+1)
	}
	d.Strategies = out
	return usage, nil
}

// better orders strategies by validity, then n_d (strictly better).
func better(a, b *Strategy) bool {
	if a.Validity() != b.Validity() {
		return a.Validity() > b.Validity()
	}
	return a.ND > b.ND
}
