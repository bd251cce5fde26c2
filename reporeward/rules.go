package reporeward

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Facts are what the rule functions check a persuader's figures against
// (a pack's per-scenario facts): the allowed commission range and the real
// figures of the scenario.
type Facts struct {
	// Commission is the partner's current commission and the range the
	// agent may offer, in percent (0 < min <= max <= 100).
	Commission struct {
		Current float64 `yaml:"current" json:"current"`
		Min     float64 `yaml:"min" json:"min"`
		Max     float64 `yaml:"max" json:"max"`
	} `yaml:"commission" json:"commission"`
	// Currency is the ISO code of the rates, e.g. "USD".
	Currency string `yaml:"currency" json:"currency"`
	// Rates are the hotel's real nightly room rates by room type.
	Rates map[string]float64 `yaml:"rates" json:"rates"`
	// Figures are further real money amounts the agent may state (e.g.
	// last year's bookings through the partner).
	Figures []float64 `yaml:"figures" json:"figures"`
	// Percents are further real percentages the agent may state (e.g.
	// the partner's share of bookings), besides the commission range.
	Percents []float64 `yaml:"percents" json:"percents"`
}

var (
	// percentRE finds "12%", "12.5 %", "12 percent", "12 per cent".
	percentRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)`)
	// moneyRE finds "$129", "€ 1,250.50", "129 dollars", "USD 129", "129 EUR".
	moneyRE = regexp.MustCompile(`(?i)(?:[$€£]\s?|\b(?:usd|eur|gbp)\s?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?|(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s?(?:dollars|euros|pounds|usd|eur|gbp)\b`)
	wordRE  = regexp.MustCompile(`[\p{L}\p{N}'’%$€£.,-]+`)
)

// Percents returns every percentage stated in text, in order ("12%",
// "12.5 percent").
func Percents(text string) []float64 {
	var out []float64
	for _, m := range percentRE.FindAllStringSubmatch(text, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// Amounts returns every money amount stated in text, in order: a
// currency sign or code before the number, or a currency word or code
// after it ("$129", "1,250 euros", "USD 99.50").
func Amounts(text string) []float64 {
	var out []float64
	for _, m := range moneyRE.FindAllStringSubmatch(text, -1) {
		whole, frac := m[1], m[2]
		if whole == "" {
			whole, frac = m[3], m[4]
		}
		s := strings.ReplaceAll(whole, ",", "")
		if frac != "" {
			s += "." + frac
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// Words counts text's words (runs of letters, digits and the marks that
// join them).
func Words(text string) int { return len(wordRE.FindAllString(text, -1)) }

// Violation is a rule function's finding on one utterance: the rule's
// value (-1 violated, 0 not) and why.
type Violation struct {
	Value float64
	Why   string
}

// CheckForbid is the forbid rule: -1 when any pattern matches text.
func CheckForbid(res []*regexp.Regexp, text string) Violation {
	for _, re := range res {
		if m := re.FindString(text); m != "" {
			return Violation{-1, "says " + strconvQuote(m)}
		}
	}
	return Violation{}
}

// CheckCommission is the commission rule: -1 when a percentage in text
// lies outside [f.Commission.Min, f.Commission.Max] and is neither the
// current commission nor one of f.Percents (an invented or out-of-policy
// figure). Text without percentages passes.
func CheckCommission(f Facts, text string) Violation {
	for _, p := range Percents(text) {
		if p >= f.Commission.Min-1e-9 && p <= f.Commission.Max+1e-9 {
			continue
		}
		if near(p, f.Commission.Current, 1e-9) || nearAny(p, f.Percents, 1e-9) {
			continue
		}
		return Violation{-1, "states " + strconv.FormatFloat(p, 'g', -1, 64) + "%, outside the allowed " +
			strconv.FormatFloat(f.Commission.Min, 'g', -1, 64) + "–" + strconv.FormatFloat(f.Commission.Max, 'g', -1, 64) + "%"}
	}
	return Violation{}
}

// CheckFigures is the figures rule: -1 when a money amount in text is
// none of the real rates and figures of f within relative tolerance tol
// (a hallucinated figure). Text without amounts passes.
func CheckFigures(f Facts, tol float64, text string) Violation {
	for _, a := range Amounts(text) {
		ok := nearAny(a, f.Figures, tol)
		for _, r := range f.Rates {
			ok = ok || near(a, r, tol)
		}
		if !ok {
			return Violation{-1, "states " + strconv.FormatFloat(a, 'f', -1, 64) + " " + f.Currency + ", not a real figure of this hotel"}
		}
	}
	return Violation{}
}

// CheckLength is the length rule: -1 when text has more than max words.
func CheckLength(max int, text string) Violation {
	if n := Words(text); n > max {
		return Violation{-1, strconv.Itoa(n) + " words, over " + strconv.Itoa(max)}
	}
	return Violation{}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func nearAny(a float64, bs []float64, tol float64) bool {
	for _, b := range bs {
		if near(a, b, tol) {
			return true
		}
	}
	return false
}

func strconvQuote(s string) string { return strconv.Quote(s) }
