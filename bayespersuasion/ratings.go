package bayespersuasion

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/stats"
)

// Rating is one record of human persuasion-rating data, the shape the
// Strategic Persuasion paper repurposes: a claim, an argument for it, and
// a reader's agreement before and after reading the argument on the data
// set's own scale.
type Rating struct {
	Claim    string  `json:"claim"`
	Argument string  `json:"argument"`
	Initial  float64 `json:"rating_initial"`
	Final    float64 `json:"rating_final"`
}

// RatingReport is the human persuasion gain of a rating data set, a
// reference for the gains of simulated persuaders.
type RatingReport struct {
	// N is the number of records, Claims the number of distinct claims.
	N, Claims int
	// Gain is the mean of rating_final - rating_initial with a 95%
	// percentile bootstrap interval (stats.Bootstrap, 10,000 resamples).
	Gain stats.CI
	// Positive is the share of records whose rating rose.
	Positive float64
}

// ImportRatings reads rating data from path: JSON Lines (".jsonl" or
// ".json", one object per line with the fields of Rating) or CSV (any
// other extension, a header naming at least claim, rating_initial and
// rating_final; argument optional). Errors name the file and line: an
// unreadable file, a missing column, a number that does not parse, no
// records.
func ImportRatings(path string) ([]Rating, error) {
	f, err := filelimit.Open(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("bayes: ratings: %w", err)
	}
	defer f.Close()
	var rs []Rating
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".jsonl" || ext == ".json" {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for line := 1; sc.Scan(); line++ {
			t := strings.TrimSpace(sc.Text())
			if t == "" {
				continue
			}
			var r struct {
				Claim    string   `json:"claim"`
				Argument string   `json:"argument"`
				Initial  *float64 `json:"rating_initial"`
				Final    *float64 `json:"rating_final"`
			}
			if err := json.Unmarshal([]byte(t), &r); err != nil {
				return nil, fmt.Errorf("bayes: ratings: %s:%d: %w", path, line, err)
			}
			if r.Initial == nil || r.Final == nil {
				return nil, fmt.Errorf("bayes: ratings: %s:%d: rating_initial and rating_final are required", path, line)
			}
			rs = append(rs, Rating{r.Claim, r.Argument, *r.Initial, *r.Final})
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("bayes: ratings: %s: %w", path, err)
		}
	} else {
		cr := csv.NewReader(f)
		head, err := cr.Read()
		if err != nil {
			return nil, fmt.Errorf("bayes: ratings: %s: header: %w", path, err)
		}
		col := map[string]int{}
		for i, h := range head {
			col[strings.ToLower(strings.TrimSpace(h))] = i
		}
		for _, need := range []string{"claim", "rating_initial", "rating_final"} {
			if _, ok := col[need]; !ok {
				return nil, fmt.Errorf("bayes: ratings: %s:1: no %q column", path, need)
			}
		}
		for line := 2; ; line++ {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("bayes: ratings: %s:%d: %w", path, line, err)
			}
			r := Rating{Claim: rec[col["claim"]]}
			if i, ok := col["argument"]; ok {
				r.Argument = rec[i]
			}
			for _, f := range []struct {
				name string
				dst  *float64
			}{{"rating_initial", &r.Initial}, {"rating_final", &r.Final}} {
				v, err := strconv.ParseFloat(strings.TrimSpace(rec[col[f.name]]), 64)
				if err != nil {
					return nil, fmt.Errorf("bayes: ratings: %s:%d: %s: %w", path, line, f.name, err)
				}
				*f.dst = v
			}
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("bayes: ratings: %s: no records", path)
	}
	return rs, nil
}

// HumanGain summarises rs as a RatingReport; seed seeds the bootstrap.
// Errors: no records; those of stats.Bootstrap.
func HumanGain(rs []Rating, seed uint64) (RatingReport, error) {
	if len(rs) == 0 {
		return RatingReport{}, errors.New("bayes: no ratings")
	}
	d := make([]float64, len(rs))
	claims := map[string]bool{}
	rep := RatingReport{N: len(rs)}
	for i, r := range rs {
		d[i] = r.Final - r.Initial
		claims[r.Claim] = true
		if d[i] > 0 {
			rep.Positive++
		}
	}
	rep.Claims = len(claims)
	rep.Positive /= float64(len(rs))
	ci, err := stats.Bootstrap(len(d), func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += d[i]
		}
		return s / float64(len(idx))
	}, stats.BootstrapOptions{Seed: seed})
	if err != nil {
		return RatingReport{}, fmt.Errorf("bayes: human gain: %w", err)
	}
	rep.Gain = ci
	return rep, nil
}
