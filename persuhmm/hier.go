package persuhmm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/llm"
)

// KMeans clusters points (all of one length) into k clusters with Lloyd's
// algorithm from a k-means++ start (Arthur and Vassilvitskii 2007) under
// squared Euclidean distance, seeded: the same points, k and seed give the
// same labels. It returns labels[i] in [0, k) for every point, with no
// empty cluster (an emptied cluster is reseeded with the point farthest
// from its centroid). k is clamped to [1, len(points)]; nil for no points.
// At most 100 iterations.
//
// Choice: a small implementation of our own; the maintained Go K-means
// module we tried (github.com/muesli/kmeans) is not served by the Go module
// proxy here, and Lloyd's with k-means++ is thirty lines.
func KMeans(points [][]float64, k int, seed uint64) []int {
	n := len(points)
	if n == 0 {
		return nil
	}
	k = min(max(k, 1), n)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cent := make([][]float64, 0, k)
	cent = append(cent, clone(points[rng.IntN(n)]))
	d2 := make([]float64, n)
	for len(cent) < k {
		var sum float64
		for i, p := range points {
			d2[i] = math.Inf(1)
			for _, c := range cent {
				d2[i] = math.Min(d2[i], sqdist(p, c))
			}
			sum += d2[i]
		}
		next := 0
		if sum > 0 {
			r := rng.Float64() * sum
			for i := range points {
				r -= d2[i]
				if r <= 0 {
					next = i
					break
				}
				next = i
			}
		} else {
			next = len(cent) // all points coincide with centres: take any
		}
		cent = append(cent, clone(points[next]))
	}
	labels := make([]int, n)
	for it := 0; it < 100; it++ {
		changed := it == 0
		for i, p := range points {
			best := 0
			for c := 1; c < k; c++ {
				if sqdist(p, cent[c]) < sqdist(p, cent[best]) {
					best = c
				}
			}
			if labels[i] != best {
				labels[i], changed = best, true
			}
		}
		// recompute centroids; reseed empty clusters
		count := make([]int, k)
		for c := range cent {
			for j := range cent[c] {
				cent[c][j] = 0
			}
		}
		for i, p := range points {
			count[labels[i]]++
			for j, x := range p {
				cent[labels[i]][j] += x
			}
		}
		for c := range cent {
			if count[c] == 0 {
				far, fd := 0, -1.0
				for i, p := range points {
					if count[labels[i]] > 1 {
						if d := sqdist(p, cent[labels[i]]); d > fd {
							far, fd = i, d
						}
					}
				}
				count[labels[far]]--
				labels[far] = c
				count[c] = 1
				copy(cent[c], points[far])
				changed = true
				continue
			}
			for j := range cent[c] {
				cent[c][j] /= float64(count[c])
			}
		}
		if !changed {
			break
		}
	}
	return labels
}

func clone(v []float64) []float64 { return append([]float64(nil), v...) }

func sqdist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// HierOptions control Hierarchise.
type HierOptions struct {
	// MacroDomains is the number of domain clusters; 0 means
	// ceil(N * 21 / 35) for N domains (the PersuHMM paper's 21 macro
	// domains over 35 domains).
	MacroDomains int
	// Seed seeds K-means.
	Seed uint64
}

// Hierarchise adds the hierarchy (PersuHMM paper §3.3). Domain
// clustering: each domain's name joined with its strategies' texts is
// embedded, K-means groups the domains into MacroDomains clusters and
// sum.MacroDomain names each. Strategy clustering: within each domain of N
// > 4 strategies, K-means with K = N - 4 over the strategies' text
// embeddings; every cluster of two or more gets a macro-strategy from
// sum.MacroStrategy, or is dissolved when it declines. Earlier hierarchy
// is replaced. Errors: the encoder's or the summariser's.
func (m *Memory) Hierarchise(ctx context.Context, enc embed.Encoder, sum Summariser, opt HierOptions) (llm.Usage, error) {
	var usage llm.Usage
	m.MacroDomains = nil
	var texts []string
	var names []string
	for _, d := range m.Domains {
		d.Macros = nil
		for _, s := range d.Strategies {
			s.Macro = ""
		}
		if len(d.Strategies) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString(d.Name)
		for _, s := range d.Strategies {
			b.WriteString(". ")
			b.WriteString(s.Text)
		}
		names = append(names, d.Name)
		texts = append(texts, b.String())
	}
	if len(names) > 0 {
		vs, err := enc.Encode(ctx, texts)
		if err != nil {
			return usage, fmt.Errorf("persuhmm: hierarchise: %w", err)
		}
		k := opt.MacroDomains
		if k <= 0 {
			k = (len(names)*21 + 34) / 35
		}
		labels := KMeans(vs, k, opt.Seed)
		groups := make([][]string, min(max(k, 1), len(names)))
		for i, l := range labels {
			groups[l] = append(groups[l], names[i])
		}
		for _, g := range groups {
			name, u, err := sum.MacroDomain(ctx, g)
			usage = usage.Add(u)
			if err != nil {
				return usage, fmt.Errorf("persuhmm: macro domain: %w", err)
			}
			m.MacroDomains = append(m.MacroDomains, MacroDomain{Name: name, Domains: g})
		}
	}
	for _, d := range m.Domains {
		n := len(d.Strategies)
		if n <= 4 {
			continue
		}
		st := make([]string, n)
		for i, s := range d.Strategies {
			st[i] = s.Text
		}
		vs, err := enc.Encode(ctx, st)
		if err != nil {
			return usage, fmt.Errorf("persuhmm: hierarchise %q: %w", d.Name, err)
		}
		labels := KMeans(vs, n-4, opt.Seed^uint64(len(d.Name)))
		clusters := make([][]*Strategy, n-4)
		for i, l := range labels {
			clusters[l] = append(clusters[l], d.Strategies[i])
		}
		for _, c := range clusters {
			if len(c) < 2 {
				continue
			}
			text, ok, u, err := sum.MacroStrategy(ctx, c)
			usage = usage.Add(u)
			if err != nil {
				return usage, fmt.Errorf("persuhmm: macro-strategy in %q: %w", d.Name, err)
			}
			if !ok {
				continue
			}
			mac := MacroStrategy{ID: m.newID("m"), Text: text}
			for _, s := range c {
				s.Macro = mac.ID
				mac.Members = append(mac.Members, s.ID)
			}
			d.Macros = append(d.Macros, mac)
		}
	}
	return usage, nil
}
