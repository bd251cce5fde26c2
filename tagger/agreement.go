package tagger

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// LabelledUnit is one human-labelled persuader unit (a sentence or an
// utterance) for measuring the tagger's agreement with human annotation.
type LabelledUnit struct {
	// Ref locates the unit in its source, e.g. "300_dialog.csv:12".
	Ref string
	// Text is the unit as written.
	Text string
	// Labels are the source's own labels for the unit (e.g. P4G
	// er_label_1 and er_label_2), kept for the per-label breakdown.
	Labels []string
	// Gold is the set of acts the labels map to (see P4GAct).
	Gold ActSet
	// GoldStrategies is the set of strategies the labels name (see
	// ParseStrategy).
	GoldStrategies StrategySet
	// Dialogue is the unit's dialogue id (P4G B2), "" when unknown.
	Dialogue string
}

// StrategyAgreement is the per-unit binary agreement of the tagger with
// the gold labels for one strategy; the fields mean what they mean in
// ActAgreement. Support = TP + FN is the number of units the annotators
// gave the label.
type StrategyAgreement struct {
	Strategy                     Strategy
	TP, FP, FN, TN, Support      int
	Precision, Recall, F1, Kappa float64
}

// ActAgreement is the per-unit binary agreement of the tagger with the
// gold labels for one act.
type ActAgreement struct {
	Act Act
	// TP, FP, FN, TN count units: tagger fires and gold has the act, fires
	// without it, misses it, neither.
	TP, FP, FN, TN int
	// Precision = TP/(TP+FP), Recall = TP/(TP+FN), F1 their harmonic mean,
	// each in [0, 1]; NaN when the denominator is 0 (no predictions, no
	// gold positives).
	Precision, Recall, F1 float64
	// Kappa is Cohen's kappa of the two binary raters, (po - pe)/(1 - pe),
	// in [-1, 1]; NaN when pe = 1 (both raters constant and equal).
	Kappa float64
}

// LabelBreakdown counts, for one source label, how often the tagger fires
// each act on units carrying that label.
type LabelBreakdown struct {
	Label string
	// Units is the number of units with the label.
	Units int
	// Mapped is the act the label maps to; ok false when it has none.
	Mapped   Act
	MappedOK bool
	// Fired[a] is the number of those units on which the tagger found act a.
	Fired [NumActs]int
	// Pressure is the number of those units with at least one pressure marker.
	Pressure int
}

// AgreementReport is the tagger's agreement with a labelled unit set.
type AgreementReport struct {
	// Units is the number of units compared.
	Units int
	// Acts holds one entry per act, in Figure 5 order.
	Acts [NumActs]ActAgreement
	// Labels is the per-label breakdown, sorted by label.
	Labels []LabelBreakdown
	// PressureUnits is the number of units with at least one pressure marker.
	PressureUnits int
	// Strategies holds one entry per strategy, in declaration order.
	Strategies [NumStrategies]StrategyAgreement
}

// Agreement tags every unit and compares the found acts with unit.Gold, per
// unit and per act (precision, recall, F1, Cohen's kappa). It reads nothing
// from disk; ReadP4G builds the units from PersuasionForGood.
func Agreement(units []LabelledUnit) AgreementReport {
	var rep AgreementReport
	rep.Units = len(units)
	byLabel := map[string]*LabelBreakdown{}
	for _, u := range units {
		tg := Tag(u.Text)
		if tg.Pressure > 0 {
			rep.PressureUnits++
		}
		for a := Act(0); a < NumActs; a++ {
			s := &rep.Acts[a]
			confuse(&s.TP, &s.FP, &s.FN, &s.TN, tg.Acts.Has(a), u.Gold.Has(a))
		}
		for st := Strategy(0); st < NumStrategies; st++ {
			s := &rep.Strategies[st]
			confuse(&s.TP, &s.FP, &s.FN, &s.TN, tg.Strategies.Has(st), u.GoldStrategies.Has(st))
		}
		seen := map[string]bool{}
		for _, l := range u.Labels {
			if seen[l] {
				continue
			}
			seen[l] = true
			b := byLabel[l]
			if b == nil {
				b = &LabelBreakdown{Label: l}
				b.Mapped, b.MappedOK = P4GAct(l)
				byLabel[l] = b
			}
			b.Units++
			if tg.Pressure > 0 {
				b.Pressure++
			}
			for a := Act(0); a < NumActs; a++ {
				if tg.Acts.Has(a) {
					b.Fired[a]++
				}
			}
		}
	}
	for a := Act(0); a < NumActs; a++ {
		s := &rep.Acts[a]
		s.Act = a
		s.Precision, s.Recall, s.F1, s.Kappa = scores(s.TP, s.FP, s.FN, s.TN)
	}
	for st := Strategy(0); st < NumStrategies; st++ {
		s := &rep.Strategies[st]
		s.Strategy = st
		s.Support = s.TP + s.FN
		s.Precision, s.Recall, s.F1, s.Kappa = scores(s.TP, s.FP, s.FN, s.TN)
	}
	for _, b := range byLabel {
		rep.Labels = append(rep.Labels, *b)
	}
	slices.SortFunc(rep.Labels, func(x, y LabelBreakdown) int { return strings.Compare(x.Label, y.Label) })
	return rep
}

// confuse counts one unit into a binary confusion table: pred is whether
// the tagger fired, gold whether the annotators gave the label.
func confuse(tp, fp, fn, tn *int, pred, gold bool) {
	switch {
	case pred && gold:
		*tp++
	case pred:
		*fp++
	case gold:
		*fn++
	default:
		*tn++
	}
}

// scores are a confusion table's precision, recall, F1 (ratio: NaN for a
// zero denominator) and Cohen's kappa (kappa).
func scores(tp, fp, fn, tn int) (precision, recall, f1, k float64) {
	return ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(2*tp, 2*tp+fp+fn), kappa(tp, fp, fn, tn)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// kappa is Cohen's kappa for two binary raters from their 2x2 table
// (tp: both yes, fp: tagger yes/gold no, fn: tagger no/gold yes, tn: both no).
func kappa(tp, fp, fn, tn int) float64 {
	n := float64(tp + fp + fn + tn)
	if n == 0 {
		return math.NaN()
	}
	po := float64(tp+tn) / n
	predYes, goldYes := float64(tp+fp)/n, float64(tp+fn)/n
	pe := predYes*goldYes + (1-predYes)*(1-goldYes)
	if pe == 1 {
		return math.NaN()
	}
	return (po - pe) / (1 - pe)
}

// p4gActs maps PersuasionForGood persuader strategy labels (Wang et al.,
// ACL 2019, 300 annotated dialogues, er_label_1/er_label_2) to the acts
// they correspond to.
//
// Choice: the mapping is the project's (P4G and the Probe-RPO paper define their
// categories independently):
//   - diagnostic: the inquiry labels (personal-, task- and
//     source-related-inquiry, and the rare non-personal-task-related-inquiry
//     spelling) and ask-not-donate-reason; many P4G inquiries are yes/no
//     knowledge checks ("have you heard of Save the Children?"), which the
//     tagger deliberately does not count, so recall is bounded;
//   - evidence: credibility-appeal (citing the organisation's record) and
//     logical-appeal (P4G: "reasoning and evidence");
//   - plan: donation-information (the donation procedure and range: how,
//     from what, how much);
//   - commitment: proposition-of-donation, foot-in-the-door,
//     ask-donation-amount, confirm-donation, ask-donate-more;
//   - autonomy: no P4G label;
//   - no act: emotion-appeal, personal-story, self-modeling, greeting,
//     thank, acknowledgement, praise-user, comment-partner, the
//     *-to-inquiry answers, off-task, closing, you-are-welcome, other.
var p4gActs = map[string]Act{
	"personal-related-inquiry":          Diagnostic,
	"task-related-inquiry":              Diagnostic,
	"source-related-inquiry":            Diagnostic,
	"non-personal-task-related-inquiry": Diagnostic,
	"ask-not-donate-reason":             Diagnostic,
	"credibility-appeal":                Evidence,
	"logical-appeal":                    Evidence,
	"donation-information":              Plan,
	"proposition-of-donation":           Commitment,
	"foot-in-the-door":                  Commitment,
	"ask-donation-amount":               Commitment,
	"confirm-donation":                  Commitment,
	"ask-donate-more":                   Commitment,
}

// P4GAct returns the act a PersuasionForGood persuader strategy label maps
// to (case-insensitive); ok is false for labels with no counterpart (see
// the mapping's Choice note in docs/tagger.md).
func P4GAct(label string) (Act, bool) {
	a, ok := p4gActs[strings.ToLower(strings.TrimSpace(label))]
	return a, ok
}

// P4GLabels returns the mapped P4G labels, sorted.
func P4GLabels() []string {
	out := make([]string, 0, len(p4gActs))
	for l := range p4gActs {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// ReadP4G reads PersuasionForGood's annotated units (300_dialog.csv: a
// header row naming at least B4, Unit, er_label_1 and er_label_2, and
// optionally B2, the dialogue id) from r and returns one LabelledUnit per
// persuader row (B4 == "0"), with Gold mapped by P4GAct and GoldStrategies
// by ParseStrategy. name is used in errors and in each unit's Ref
// ("name:line"). It returns an error naming the file, line and field for a
// malformed file; no units are returned then.
func ReadP4G(r io.Reader, name string) ([]LabelledUnit, error) {
	cr, col, err := readCSVHeader(r, name, "B4", "Unit", "er_label_1", "er_label_2")
	if err != nil {
		return nil, err
	}
	var units []LabelledUnit
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err) // csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		get := func(f string) (string, error) {
			i := col[f]
			if i >= len(rec) {
				return "", fmt.Errorf("%s:%d: field %q missing (row has %d fields)", name, line, f, len(rec))
			}
			return strings.TrimSpace(rec[i]), nil
		}
		role, err := get("B4")
		if err != nil {
			return nil, err
		}
		if _, perr := strconv.Atoi(role); perr != nil {
			return nil, fmt.Errorf("%s:%d: field \"B4\": role %q is not 0 or 1", name, line, role)
		}
		if role != "0" {
			continue
		}
		text, err := get("Unit")
		if err != nil {
			return nil, err
		}
		u := LabelledUnit{Ref: name + ":" + strconv.Itoa(line), Text: text}
		if i, ok := col["B2"]; ok && i < len(rec) {
			u.Dialogue = strings.TrimSpace(rec[i])
		}
		for _, f := range []string{"er_label_1", "er_label_2"} {
			l, err := get(f)
			if err != nil {
				return nil, err
			}
			if l == "" {
				continue
			}
			l = strings.ToLower(l)
			u.Labels = append(u.Labels, l)
			if a, ok := P4GAct(l); ok {
				u.Gold = u.Gold.With(a)
			}
			if st, ok := ParseStrategy(l); ok {
				u.GoldStrategies = u.GoldStrategies.With(st)
			}
		}
		units = append(units, u)
	}
	return units, nil
}

// Format writes the report as two plain-text tables: per-act agreement,
// then the per-label breakdown (how often each act fires on each label).
func (r AgreementReport) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "units: %d (with a pressure marker: %d)\n\n", r.Units, r.PressureUnits)
	fmt.Fprintf(&b, "%-11s %6s %6s %6s %6s %9s %6s %6s %6s\n", "act", "TP", "FP", "FN", "TN", "precision", "recall", "F1", "kappa")
	for _, a := range r.Acts {
		fmt.Fprintf(&b, "%-11s %6d %6d %6d %6d %9s %6s %6s %6s\n", a.Act, a.TP, a.FP, a.FN, a.TN,
			f3(a.Precision), f3(a.Recall), f3(a.F1), f3(a.Kappa))
	}
	fmt.Fprintf(&b, "\n%-34s %-11s %6s", "P4G label", "maps to", "units")
	for _, a := range Acts {
		fmt.Fprintf(&b, " %6.6s", a)
	}
	fmt.Fprintf(&b, " %6s\n", "press")
	for _, l := range r.Labels {
		m := "-"
		if l.MappedOK {
			m = l.Mapped.String()
		}
		fmt.Fprintf(&b, "%-34s %-11s %6d", l.Label, m, l.Units)
		for _, n := range l.Fired {
			fmt.Fprintf(&b, " %6d", n)
		}
		fmt.Fprintf(&b, " %6d\n", l.Pressure)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func f3(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// readCSVHeader opens r as a CSV file (rows of any length) and reads its
// header row. It returns the reader and each trimmed column name's index;
// the error names the file for an empty file or bad CSV, and file:1 for a
// header that lacks one of need.
func readCSVHeader(r io.Reader, name string, need ...string) (*csv.Reader, map[string]int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty file, want a header row", name)
		}
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, f := range need {
		if _, ok := col[f]; !ok {
			return nil, nil, fmt.Errorf("%s:1: header lacks field %q (want %v)", name, f, need)
		}
	}
	return cr, col, nil
}
