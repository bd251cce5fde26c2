// Package maspdata imports the CraigslistBargain (He et al., 2018) and ESConv
// (Liu et al., 2021) evaluation splits in the JSON-lines layout used by
// PPDPP (Deng et al., 2023) and MASP (MASP paper, Appendix C), and turns each
// dialogue into a masp.Case for the closed-loop protocol: a scenario the
// roles are started on, the opening context of PPDPP's environment, and
// the facts the success judges need (the buyer's and seller's prices, the
// emotion and problem types).
//
// ESConv is CC BY-NC 4.0 (research use only) and is never shipped with
// PersuArena: it is read from a path the user gives. Nothing here refers
// to a fixed data location.
package maspdata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/scenario"
)

// Turn is one utterance of a PPDPP dialogue. Speaker is "usr" (the user
// side: CraigslistBargain seller, ESConv help-seeker) or "sys" (the system
// side: buyer, supporter); Strategy is the annotated act, possibly "".
type Turn struct {
	Speaker  string `json:"speaker"`
	Text     string `json:"text"`
	Strategy string `json:"strategy,omitempty"`
}

// CBRecord is one CraigslistBargain line: the item, each side's view of the
// listing, each side's private target price (US$) and the human dialogue.
// In PPDPP and MASP the system is the buyer.
type CBRecord struct {
	ItemName   string  `json:"item_name"`
	BuyerDesc  string  `json:"buyer_item_description"`
	BuyerPrice float64 `json:"buyer_price"`
	SellerDesc string  `json:"seller_item_description"`
	// SellerPrice is the listed price.
	SellerPrice float64 `json:"seller_price"`
	Dialog      []Turn  `json:"dialog"`
}

// ESCRecord is one ESConv line: the help-seeker's emotion and problem
// types, the situation they wrote, and the human dialogue.
type ESCRecord struct {
	EmotionType string `json:"emotion_type"`
	ProblemType string `json:"problem_type"`
	Situation   string `json:"situation"`
	Dialog      []Turn `json:"dialog"`
}

// readLines decodes each non-blank line of r with decode; problems are
// collected as "name:line: field: message" and returned together (no
// partial result).
func readLines(name string, r io.Reader, decode func(raw []byte) (field string, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var errs []error
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if field, err := decode(raw); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s: %v", name, n, field, err))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return errors.Join(errs...)
}

func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func checkDialog(d []Turn) (string, error) {
	for i, t := range d {
		if t.Speaker != "usr" && t.Speaker != "sys" {
			return fmt.Sprintf("dialog[%d].speaker", i), fmt.Errorf("%q is neither usr nor sys", t.Speaker)
		}
	}
	return "", nil
}

// ReadCB reads CraigslistBargain records (cb-*.txt). Every line must be a
// JSON object with exactly the CBRecord fields: item_name non-empty,
// buyer_price and seller_price present, positive and different, and every
// dialog speaker usr or sys. All problems are reported together as
// "name:line: field: message"; nothing is returned then.
func ReadCB(name string, r io.Reader) ([]CBRecord, error) {
	var out []CBRecord
	err := readLines(name, r, func(raw []byte) (string, error) {
		var probe struct {
			BuyerPrice  *float64 `json:"buyer_price"`
			SellerPrice *float64 `json:"seller_price"`
		}
		var rec CBRecord
		if err := strict(raw, &rec); err != nil {
			return "(json)", err
		}
		json.Unmarshal(raw, &probe)
		switch {
		case strings.TrimSpace(rec.ItemName) == "":
			return "item_name", errors.New("missing or empty")
		case probe.BuyerPrice == nil:
			return "buyer_price", errors.New("missing")
		case probe.SellerPrice == nil:
			return "seller_price", errors.New("missing")
		case rec.BuyerPrice <= 0:
			return "buyer_price", fmt.Errorf("%g is not positive", rec.BuyerPrice)
		case rec.SellerPrice <= 0:
			return "seller_price", fmt.Errorf("%g is not positive", rec.SellerPrice)
		case rec.BuyerPrice == rec.SellerPrice:
			return "buyer_price", fmt.Errorf("equals seller_price %g (buyer utility undefined)", rec.SellerPrice)
		}
		if f, err := checkDialog(rec.Dialog); err != nil {
			return f, err
		}
		out = append(out, rec)
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadESConv reads ESConv records (esc-*.txt): exactly the ESCRecord
// fields, emotion_type, problem_type and situation non-empty, every dialog
// speaker usr or sys. Errors as for ReadCB.
func ReadESConv(name string, r io.Reader) ([]ESCRecord, error) {
	var out []ESCRecord
	err := readLines(name, r, func(raw []byte) (string, error) {
		var rec ESCRecord
		if err := strict(raw, &rec); err != nil {
			return "(json)", err
		}
		for _, f := range []struct{ name, v string }{{"emotion_type", rec.EmotionType}, {"problem_type", rec.ProblemType}, {"situation", rec.Situation}} {
			if strings.TrimSpace(f.v) == "" {
				return f.name, errors.New("missing or empty")
			}
		}
		if f, err := checkDialog(rec.Dialog); err != nil {
			return f, err
		}
		out = append(out, rec)
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func readFile[T any](path string, read func(string, io.Reader) ([]T, error)) ([]T, error) {
	f, err := filelimit.Open(path, filelimit.Data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(path, f)
}

// LoadCB reads the CraigslistBargain file at path (see ReadCB).
func LoadCB(path string) ([]CBRecord, error) { return readFile(path, ReadCB) }

// LoadESConv reads the ESConv file at path (see ReadESConv).
func LoadESConv(path string) ([]ESCRecord, error) { return readFile(path, ReadESConv) }

// SplitOf guesses a file's split from its name: "test" -> heldout,
// "valid"/"val"/"dev" -> val, anything else train (PPDPP names its files
// cb-test.txt, esc-valid.txt, ...).
func SplitOf(path string) scenario.Split {
	b := strings.ToLower(filepath.Base(path))
	switch {
	case strings.Contains(b, "test"):
		return scenario.Heldout
	case strings.Contains(b, "valid"), strings.Contains(b, "val"), strings.Contains(b, "dev"):
		return scenario.Val
	}
	return scenario.Train
}

// Prefix returns the id prefix for a file: its base name without
// extension, e.g. "cb-test".
func Prefix(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

func money(p float64) string { return "$" + strconv.FormatFloat(p, 'f', -1, 64) }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// SellerBottomFraction sets an LLM seller's bottom line as a share of the
// listed price (masp.Case.SellerBottom, rounded to whole dollars).
//
// Choice: 0.7. CraigslistBargain gives each side only its own target (the
// seller's is the listing), so the seller's lowest acceptable price is
// not in the data; 0.7 is the median ratio of the buyer's target to the
// listing in PPDPP's cb-test.txt (range 0.47-0.90), so in half of the cases
// the buyer's target lies within reach. It only shapes the LLM seller's
// prompt: success is still buyer utility >= 0 (any deal at or below the
// listing).
const SellerBottomFraction = 0.7

// CBCase turns a CraigslistBargain record into a masp.Case with id
// "<prefix>-<n>" (n 1-based, 4 digits).
//
// Roles (PPDPP, MASP paper, Appendix C.7): the persuader is the buyer (the
// system), the persuadee the seller (the user). The opening context is
// PPDPP's environment reset, reworded: the buyer asks the price and the
// seller names the listed price. The case keeps both private prices for
// the buyer-utility judge.
//
// Choices, since the scenario schema was made for persuasion: family
// "financial advising" (the closest of the fixed families to a money
// decision); resistance EB (the seller holds a settled view of the item's
// worth; the data set has no resistance type, so this only matters to the
// simulator); two concerns (price and condition) with keywords so the
// simulator can react; initial stance -0.3. The buyer's target price has no
// place a persuader alone can see (scenario has no persuader-private
// field), so it is kept only in the Case; the buyer's view of the listing is
// the public background, the seller's view the hidden persona.
func CBCase(rec CBRecord, prefix string, n int, split scenario.Split) *masp.Case {
	id := fmt.Sprintf("%s-%04d", prefix, n)
	item := strings.TrimSpace(rec.ItemName)
	list := money(rec.SellerPrice)
	sc := &scenario.Scenario{
		ID: id, Split: split, Domain: "price negotiation: used " + strings.ToLower(item), Family: scenario.Financial,
		Proposal:         fmt.Sprintf("Sell the %s to the buyer for less than the listed price of %s.", item, list),
		AcceptMeans:      fmt.Sprintf("The seller agrees to a final price for the %s at or below the listed %s.", item, list),
		ConditionalMeans: "The seller agrees to a price only with conditions, such as cash, pickup time or extras.",
		Persuader:        scenario.Party{Role: "a buyer interested in the listed " + strings.ToLower(item)},
		Persuadee:        scenario.Party{Role: "the seller of the " + strings.ToLower(item)},
		Relationship:     "strangers dealing over an online listing", Closeness: scenario.Strangers,
		Background: fmt.Sprintf("A used %s is listed for sale online at %s. Listing: %s", item, list, clip(orText(rec.BuyerDesc, item), 600)),
		Hidden: scenario.HiddenProfile{
			Persona:    fmt.Sprintf("The seller of a used %s. Their own description: %s", item, clip(orText(rec.SellerDesc, item), 800)),
			Motivation: fmt.Sprintf("I want to sell the %s for as close to my listed price of %s as I can.", item, list),
			Resistance: scenario.EntrenchedBelief,
			Concerns: []scenario.Concern{
				{ID: "price", Description: fmt.Sprintf("I think the %s is worth close to the %s I am asking.", item, list),
					Keywords: []string{"price", "offer", "worth", "value", "cost", "cheaper", "discount", "cash", "budget"}},
				{ID: "condition", Description: fmt.Sprintf("I want the buyer to see how good a condition the %s is in.", item),
					Keywords: []string{"condition", "quality", "works", "new", "clean", "shape", "wear", "damage", "repair"}},
			},
			Constraints:   []string{fmt.Sprintf("My listed price is %s; I do not know how much the buyer wants to pay.", list)},
			InitialStance: -0.3,
		},
		Provenance: scenario.Provenance{Source: "CraigslistBargain (He et al., 2018), PPDPP layout", Ref: fmt.Sprintf("%s:%d", prefix, n), License: "CoCoA research data (MIT code)"},
	}
	return &masp.Case{
		Task: bdi.CB, ID: id, Scenario: sc,
		Opening: []episode.Message{
			{Speaker: episode.PersuaderSpeaker, Text: fmt.Sprintf("Hi, how much are you asking for the %s?", item)},
			{Speaker: episode.PersuadeeSpeaker, Text: fmt.Sprintf("Hi! It's a good %s, and the price is %s.", item, list)},
		},
		Goal:       fmt.Sprintf("buy the %s for less than the listed %s", item, list),
		Profile:    sc.Hidden.Persona,
		BuyerPrice: rec.BuyerPrice, SellerPrice: rec.SellerPrice,
		Item: item, SellerBottom: math.Round(SellerBottomFraction * rec.SellerPrice),
	}
}

func orText(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}

// ESConvCase turns an ESConv record into a masp.Case with id
// "<prefix>-<n>". The persuader is the supporter (the system), the
// persuadee the help-seeker (the user); the opening context is the
// help-seeker's situation as their first message (PPDPP's environment
// reset).
//
// Choices: family "healthcare" (emotional wellbeing is the closest of the
// fixed families); resistance AA (a help-seeker torn between wanting help
// and avoiding action; a placeholder for the simulator, the data set has
// none); two concerns (being understood, seeing a way forward); initial
// stance -0.2.
func ESConvCase(rec ESCRecord, prefix string, n int, split scenario.Split) *masp.Case {
	id := fmt.Sprintf("%s-%04d", prefix, n)
	emo, prob := strings.ToLower(strings.TrimSpace(rec.EmotionType)), strings.ToLower(strings.TrimSpace(rec.ProblemType))
	probKW := []string{"plan", "step", "try", "cope", "help"}
	for _, w := range strings.Fields(prob) {
		if len(w) > 3 {
			probKW = append(probKW, w)
		}
	}
	sc := &scenario.Scenario{
		ID: id, Split: split, Domain: "emotional support: " + prob, Family: scenario.Healthcare,
		Proposal:         "Talk through what is troubling you and try one concrete step to cope with it.",
		AcceptMeans:      "The help-seeker feels better and commits to a concrete coping step.",
		ConditionalMeans: "The help-seeker will try a step only with conditions or more help.",
		Persuader:        scenario.Party{Role: "a supportive listener on an emotional-support chat"},
		Persuadee:        scenario.Party{Role: "a person looking for emotional support"},
		Relationship:     "strangers on an emotional-support chat", Closeness: scenario.Strangers,
		Background: "An online emotional-support conversation. The help-seeker has described their situation in their first message.",
		Hidden: scenario.HiddenProfile{
			Persona:    fmt.Sprintf("A person feeling %s because of %s. Their situation: %s", emo, prob, clip(rec.Situation, 800)),
			Motivation: fmt.Sprintf("I want to feel less %s and find a way to cope with %s.", emo, prob),
			Resistance: scenario.AmbivalentAvoidance,
			Concerns: []scenario.Concern{
				{ID: "feelings", Description: fmt.Sprintf("I need someone to understand how %s I feel.", emo),
					Keywords: []string{"feel", "feeling", "understand", "hear", "sounds", emo}},
				{ID: "way_forward", Description: fmt.Sprintf("I don't see a way out of this %s yet.", prob), Keywords: probKW},
			},
			InitialStance: -0.2,
		},
		Provenance: scenario.Provenance{Source: "ESConv (Liu et al., 2021), PPDPP layout", Ref: fmt.Sprintf("%s:%d", prefix, n), License: "CC BY-NC 4.0 (research use only; not vendored)"},
	}
	return &masp.Case{
		Task: bdi.ESConv, ID: id, Scenario: sc,
		Opening: []episode.Message{{Speaker: episode.PersuadeeSpeaker, Text: strings.TrimSpace(rec.Situation)}},
		Goal:    "help the help-seeker feel better and try a concrete coping step",
		Profile: sc.Hidden.Persona, Emotion: emo, Problem: prob,
	}
}

// LoadCases reads the PPDPP file at path for task (bdi.CB or bdi.ESConv)
// and returns its cases in file order, with ids "<file base>-<n>" and the
// split from the file name (SplitOf). It returns an error for another
// task.
func LoadCases(task bdi.Task, path string) ([]*masp.Case, error) {
	prefix, split := Prefix(path), SplitOf(path)
	var out []*masp.Case
	switch task {
	case bdi.CB:
		recs, err := LoadCB(path)
		if err != nil {
			return nil, err
		}
		for i, r := range recs {
			out = append(out, CBCase(r, prefix, i+1, split))
		}
	case bdi.ESConv:
		recs, err := LoadESConv(path)
		if err != nil {
			return nil, err
		}
		for i, r := range recs {
			out = append(out, ESConvCase(r, prefix, i+1, split))
		}
	default:
		return nil, fmt.Errorf("ppdpp: no PPDPP importer for task %q (want cb or esconv)", task)
	}
	return out, nil
}
