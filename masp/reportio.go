package masp

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/persuarena/persuarena/stats"
)

// jsonNum is x for JSON, null when NaN or infinite.
func jsonNum(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

func jsonCI(c stats.CI) map[string]any {
	return map[string]any{"estimate": jsonNum(c.Estimate), "lo": jsonNum(c.Lo), "hi": jsonNum(c.Hi), "method": c.Method, "level": c.Level, "resamples": c.Resamples}
}

// MarshalJSON encodes the report with snake_case keys: t, tau_q, title,
// rows (persuader, user, n, sr, at, rcsr as {estimate, lo, hi, method,
// level, resamples}, mean_q, progress, mental_err (null when not
// measured), errors, rcsr_curve), worst (persuader, users, sr, rcsr,
// sr_user, rcsr_user) and diffs (persuader, baseline, user, sr, at, rcsr).
func (rep *Report) MarshalJSON() ([]byte, error) {
	rows := make([]map[string]any, len(rep.Rows))
	for i, r := range rep.Rows {
		curve := make([]any, len(r.Curve))
		for k, v := range r.Curve {
			curve[k] = jsonNum(v)
		}
		rows[i] = map[string]any{"persuader": r.Persuader, "user": r.User, "n": r.N, "sr": jsonCI(r.SR), "at": jsonCI(r.AT), "rcsr": jsonCI(r.RCSR),
			"mean_q": jsonNum(r.MeanQ), "progress": jsonNum(r.Progress), "mental_err": jsonNum(r.MentalErr), "errors": r.Errors, "rcsr_curve": curve}
	}
	worst := make([]map[string]any, len(rep.Worst))
	for i, w := range rep.Worst {
		worst[i] = map[string]any{"persuader": w.Persuader, "users": w.Users, "sr": jsonCI(w.SR), "rcsr": jsonCI(w.RCSR), "sr_user": w.SRUser, "rcsr_user": w.RCSRUser}
	}
	diffs := make([]map[string]any, len(rep.Diffs))
	for i, d := range rep.Diffs {
		diffs[i] = map[string]any{"persuader": d.Persuader, "baseline": d.Baseline, "user": d.User, "sr": jsonCI(d.SR), "at": jsonCI(d.AT), "rcsr": jsonCI(d.RCSR)}
	}
	return json.Marshal(map[string]any{"title": rep.Title, "t": rep.T, "tau_q": rep.TauQ, "rows": rows, "worst": worst, "diffs": diffs})
}

// CSVHeader is the header of Report.CSVRows.
var CSVHeader = []string{"kind", "set", "persuader", "baseline", "user", "n",
	"sr", "sr_lo", "sr_hi", "at", "at_lo", "at_hi", "rcsr", "rcsr_lo", "rcsr_hi", "mean_q", "t", "tau_q"}

// CSVRows returns the report as CSV records under CSVHeader, with set in
// the set column: kind "row" per persuader and user; "worst" per persuader
// (user holds the worst users as "SR_USER/RCSR_USER", at is empty);
// "diff" per paired difference (persuader - baseline).
func (rep *Report) CSVRows(set string) [][]string {
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	ci := func(c stats.CI) []string { return []string{f(c.Estimate), f(c.Lo), f(c.Hi)} }
	t, tq := strconv.Itoa(rep.T), f(rep.TauQ)
	var out [][]string
	for _, r := range rep.Rows {
		rec := append([]string{"row", set, r.Persuader, "", r.User, strconv.Itoa(r.N)}, ci(r.SR)...)
		rec = append(append(append(rec, ci(r.AT)...), ci(r.RCSR)...), f(r.MeanQ), t, tq)
		out = append(out, rec)
	}
	for _, w := range rep.Worst {
		rec := append([]string{"worst", set, w.Persuader, "", w.SRUser + "/" + w.RCSRUser, ""}, ci(w.SR)...)
		rec = append(append(append(rec, "", "", ""), ci(w.RCSR)...), "", t, tq)
		out = append(out, rec)
	}
	for _, d := range rep.Diffs {
		rec := append([]string{"diff", set, d.Persuader, d.Baseline, d.User, ""}, ci(d.SR)...)
		rec = append(append(append(rec, ci(d.AT)...), ci(d.RCSR)...), "", t, tq)
		out = append(out, rec)
	}
	return out
}
