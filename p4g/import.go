// Package p4g imports PersuasionForGood (Wang et al., ACL 2019) into
// PersuArena scenarios: one scenario per real persuadee, whose hidden
// profile is rendered from that participant's own survey (Big Five, moral
// foundations, Schwartz values, decision style, demographics) and which
// keeps the real outcome (the donation actually made) and the real
// persuader's utterances for open-loop replay (package fidelity).
//
// The rules that turn survey scores into a resistance type, an initial
// stance and concerns are deterministic and documented in docs/p4g.md.
package p4g

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// The four files Import reads from its directory.
const (
	InfoFile          = "full_info.csv"
	DialogFile        = "full_dialog.csv"
	AnnotatedDialog   = "300_dialog.csv"
	AnnotatedInfoFile = "300_info.csv"
)

// Split sizes (the Probe-RPO paper uses 120 held-out and 200 validation
// scenarios); the rest is train. Splits are drawn by user (see Import), so
// the sizes are targets that whole users are fitted into.
const (
	HeldoutSize = 120
	ValSize     = 200
)

// MaxDonation is the most a persuadee could give: their whole task payment,
// US$2 (Wang et al. 2019 §3).
const MaxDonation = 2.0

// BadPrefix marks dialogues the upstream release flags as bad (e.g. a
// participant pasting unrelated web text); they are skipped.
const BadPrefix = "BAD_"

// Skip reasons, as printed in the Report.
const (
	SkipBad        = "dialogue flagged BAD_ upstream"
	SkipSurvey     = "incomplete survey (a score or demographic is empty)"
	SkipDonation   = "no actual donation (B6 empty)"
	SkipNoDialogue = "no sentences in full_dialog.csv"
)

// Skipped is one persuadee left out of the import.
type Skipped struct {
	DialogueID string
	// Line is the persuadee's line in full_info.csv.
	Line   int
	Reason string
}

// Report summarises an import: what was read, what was skipped and why,
// and the resulting splits and resistance mix.
type Report struct {
	Dir string
	// InfoRows, Dialogues, PersuadeeRows and PersuaderRows count
	// full_info.csv (data rows; distinct dialogue ids; rows per role).
	InfoRows, Dialogues, PersuadeeRows, PersuaderRows int
	// DialogRows and DialogDialogues count full_dialog.csv sentences and
	// distinct dialogue ids.
	DialogRows, DialogDialogues int
	// AnnotatedDialogues is the number of distinct dialogues in
	// 300_dialog.csv; Annotated how many imported scenarios carry acts.
	AnnotatedDialogues, Annotated int
	// Skipped lists every persuadee left out, in file order.
	Skipped []Skipped
	// Scenarios is the number of scenarios built.
	Scenarios int
	// Donated counts scenarios whose actual donation is > 0.
	Donated int
	// DonationCapped and IntendedCapped count B6 and B5 values above
	// MaxDonation, capped to it (participants who typed e.g. "50").
	DonationCapped, IntendedCapped int
	// ImplausibleAge counts persuadees whose age is under 18 (kept in
	// traits as given, not used in the persona).
	ImplausibleAge int
	// Splits counts scenarios per split and Users distinct persuadee user
	// ids per split (a user is in one split only); Mix counts resistance
	// types per split, and MixAll over all scenarios.
	Splits map[scenario.Split]int
	Users  map[scenario.Split]int
	Mix    map[scenario.Split]map[scenario.Resistance]int
	MixAll map[scenario.Resistance]int
	// SplitDonated counts scenarios per split whose donation is > 0.
	SplitDonated map[scenario.Split]int
}

// SkipCounts returns the number of skipped persuadees per reason, in the
// order reasons first occur.
func (r *Report) SkipCounts() (reasons []string, counts []int) {
	for _, s := range r.Skipped {
		i := slices.Index(reasons, s.Reason)
		if i < 0 {
			reasons, counts = append(reasons, s.Reason), append(counts, 0)
			i = len(reasons) - 1
		}
		counts[i]++
	}
	return reasons, counts
}

// String renders the report for a terminal.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "PersuasionForGood import from %s\n", r.Dir)
	fmt.Fprintf(&b, "  %s: %d rows, %d dialogues (%d persuadee rows, %d persuader rows)\n",
		InfoFile, r.InfoRows, r.Dialogues, r.PersuadeeRows, r.PersuaderRows)
	fmt.Fprintf(&b, "  %s: %d sentences in %d dialogues\n", DialogFile, r.DialogRows, r.DialogDialogues)
	fmt.Fprintf(&b, "  %s: %d annotated dialogues\n", AnnotatedDialog, r.AnnotatedDialogues)
	fmt.Fprintf(&b, "  skipped %d persuadees\n", len(r.Skipped))
	reasons, counts := r.SkipCounts()
	for i := range reasons {
		fmt.Fprintf(&b, "    %4d  %s\n", counts[i], reasons[i])
	}
	fmt.Fprintf(&b, "  scenarios: %d (%d annotated); donated > $0: %d (%.1f%%)\n",
		r.Scenarios, r.Annotated, r.Donated, pct(r.Donated, r.Scenarios))
	fmt.Fprintf(&b, "  donations above $%.0f capped: %d actual (B6), %d intended (B5); ages under 18: %d\n",
		MaxDonation, r.DonationCapped, r.IntendedCapped, r.ImplausibleAge)
	fmt.Fprintf(&b, "  splits by user: train %d / val %d / heldout %d dialogues (%d / %d / %d users)\n",
		r.Splits[scenario.Train], r.Splits[scenario.Val], r.Splits[scenario.Heldout],
		r.Users[scenario.Train], r.Users[scenario.Val], r.Users[scenario.Heldout])
	fmt.Fprintf(&b, "  donated > $0 by split: train %.1f%% / val %.1f%% / heldout %.1f%%\n",
		pct(r.SplitDonated[scenario.Train], r.Splits[scenario.Train]), pct(r.SplitDonated[scenario.Val], r.Splits[scenario.Val]),
		pct(r.SplitDonated[scenario.Heldout], r.Splits[scenario.Heldout]))
	fmt.Fprintf(&b, "  resistance mix   %5s %5s %5s %5s\n", "EB", "IT", "AR", "AA")
	row := func(name string, m map[scenario.Resistance]int) {
		fmt.Fprintf(&b, "    %-12s", name)
		for _, t := range scenario.Resistances {
			fmt.Fprintf(&b, " %5d", m[t])
		}
		b.WriteByte('\n')
	}
	row("all", r.MixAll)
	for _, sp := range scenario.Splits {
		row(string(sp), r.Mix[sp])
	}
	return b.String()
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// persuadee is one full_info.csv persuadee row being imported.
type persuadee struct {
	id       string
	user     string // B3: the worker's user id
	line     int
	survey   Survey
	complete bool
	donation *float64
	turns    int
}

// dialog holds what full_dialog.csv says about one dialogue.
type dialog struct {
	persuader map[int][]string // turn -> persuader sentences, in file order
	maxTurn   int
	rows      int
}

// Import reads the PersuasionForGood CSV files in dir (InfoFile,
// DialogFile, AnnotatedDialog, AnnotatedInfoFile; see the field guide in
// docs/p4g.md) and returns one scenario per usable persuadee, sorted by id,
// with a Report.
//
// Persuadees are skipped (and listed in the Report) when their dialogue id
// starts with BadPrefix, their survey has an empty value, B6 is empty, or
// their dialogue has no sentences. Splits are assigned per user (B3), so
// that no person is the persuadee of dialogues in two splits (see
// assignSplits); the user id is kept in the provenance ref (Ref, UserOf).
//
// Errors name file, line and field: a missing file or column, a
// non-numeric score, an unknown role, a persuadee listed twice, or a
// scenario that fails validation. Output is deterministic: the same files
// give the same scenarios.
func Import(dir string) ([]scenario.Scenario, *Report, error) {
	rep := &Report{Dir: dir, Splits: map[scenario.Split]int{}, Users: map[scenario.Split]int{}, SplitDonated: map[scenario.Split]int{},
		Mix: map[scenario.Split]map[scenario.Resistance]int{}, MixAll: map[scenario.Resistance]int{}}
	for _, sp := range scenario.Splits {
		rep.Mix[sp] = map[scenario.Resistance]int{}
	}
	pees, err := readInfo(filepath.Join(dir, InfoFile), rep)
	if err != nil {
		return nil, nil, err
	}
	dialogs, err := readDialog(filepath.Join(dir, DialogFile), rep)
	if err != nil {
		return nil, nil, err
	}
	intended, err := readAnnotatedInfo(filepath.Join(dir, AnnotatedInfoFile))
	if err != nil {
		return nil, nil, err
	}
	acts, err := readAnnotatedDialog(filepath.Join(dir, AnnotatedDialog))
	if err != nil {
		return nil, nil, err
	}
	rep.AnnotatedDialogues = len(acts)

	var kept []*persuadee
	for _, p := range pees {
		reason := ""
		switch {
		case strings.HasPrefix(p.id, BadPrefix):
			reason = SkipBad
		case !p.complete:
			reason = SkipSurvey
		case p.donation == nil:
			reason = SkipDonation
		case dialogs[p.id] == nil:
			reason = SkipNoDialogue
		}
		if reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{DialogueID: p.id, Line: p.line, Reason: reason})
			continue
		}
		kept = append(kept, p)
	}

	surveys := make([]Survey, len(kept))
	for i, p := range kept {
		surveys[i] = p.survey
	}
	norms := NewNorms(surveys)
	splits := assignSplits(kept)

	out := make([]scenario.Scenario, 0, len(kept))
	for _, p := range kept {
		sc := build(p, norms, splits[p.id], dialogs[p.id], acts[p.id], intended, rep)
		out = append(out, sc)
	}
	slices.SortFunc(out, func(a, b scenario.Scenario) int { return cmp.Compare(a.ID, b.ID) })
	if err := scenario.Validate(filepath.Join(dir, InfoFile)+" (imported)", out); err != nil {
		return nil, nil, err
	}
	rep.Scenarios = len(out)
	seen := map[string]bool{}
	for _, p := range kept {
		if !seen[p.user] {
			seen[p.user] = true
			rep.Users[splits[p.id]]++
		}
	}
	for _, sc := range out {
		rep.Splits[sc.Split]++
		rep.Mix[sc.Split][sc.Hidden.Resistance]++
		rep.MixAll[sc.Hidden.Resistance]++
		if sc.Outcome.Donation != nil && *sc.Outcome.Donation > 0 {
			rep.Donated++
			rep.SplitDonated[sc.Split]++
		}
		if sc.Outcome.PersuadeeActs != nil {
			rep.Annotated++
		}
	}
	return out, rep, nil
}

// SplitHash is the hash that orders users for the split (and, in package
// fidelity, for the cross-fitting folds): FNV-1a 64 of the user id.
func SplitHash(userID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(userID))
	return h.Sum64()
}

// Outcome strata of a user for the split (see assignSplits).
const (
	strataNever  = iota // no dialogue ended in a donation
	strataAlways        // every dialogue did
	strataMixed         // some did
	numStrata
)

// stratum returns the outcome stratum of a user's persuadees.
func stratum(ps []*persuadee) int {
	donated := 0
	for _, p := range ps {
		if p.donation != nil && *p.donation > 0 {
			donated++
		}
	}
	switch donated {
	case 0:
		return strataNever
	case len(ps):
		return strataAlways
	}
	return strataMixed
}

// assignSplits maps dialogue id to split, whole users at a time, stratified
// by outcome. Each user falls in one stratum: never donated, always
// donated, or mixed (over their dialogues). Each split s gets a quota per
// stratum k, ceil(size_s × dialogues_k / all dialogues). Users are then
// taken in order of SplitHash of their id (ties by id); each joins the
// held-out split if all their dialogues fit both in what is left of
// HeldoutSize and in its stratum's held-out quota, else the val split
// under the same two conditions for ValSize, else train.
//
// Choice: split by the persuadee's user id (B3). In P4G 115 users are the
// persuadee of several dialogues (up to 12) with an identical survey, so a
// split by dialogue puts the same person in training and held-out
// (docs/fidelity.md). Persuader ids are not grouped: 176 persuadees also persuade
// in other dialogues, and joining both roles chains 545 of the 982
// dialogues into one group, leaving no room for a 120-dialogue held-out
// split.
//
// Choice: stratified by the user's outcome. Giving is mostly a trait of
// the person, and a few people own many dialogues (one never-donor owns
// 7): an unstratified split by user hash gave a held-out donor rate of
// 38.3 % against 53.6 % overall. Quotas keep every split near the overall
// rate; first-fit keeps the sizes exact while single-dialogue users are
// left to fill the gaps (there are 633).
func assignSplits(ps []*persuadee) map[string]scenario.Split {
	byUser := map[string][]*persuadee{}
	var users []string
	for _, p := range ps {
		if byUser[p.user] == nil {
			users = append(users, p.user)
		}
		byUser[p.user] = append(byUser[p.user], p)
	}
	slices.SortFunc(users, func(a, b string) int {
		if c := cmp.Compare(SplitHash(a), SplitHash(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var inStratum [numStrata]int
	for _, u := range users {
		inStratum[stratum(byUser[u])] += len(byUser[u])
	}
	type quota struct {
		split     scenario.Split
		size, got int
		k, kgot   [numStrata]int
	}
	qs := []*quota{{split: scenario.Heldout, size: HeldoutSize}, {split: scenario.Val, size: ValSize}}
	for _, q := range qs {
		for k := range numStrata {
			q.k[k] = (q.size*inStratum[k] + len(ps) - 1) / max(len(ps), 1)
		}
	}
	m := make(map[string]scenario.Split, len(ps))
	for _, u := range users {
		mine := byUser[u]
		k, n := stratum(mine), len(mine)
		sp := scenario.Train
		for _, q := range qs {
			if q.got+n <= q.size && q.kgot[k]+n <= q.k[k] {
				sp = q.split
				q.got, q.kgot[k] = q.got+n, q.kgot[k]+n
				break
			}
		}
		for _, p := range mine {
			m[p.id] = sp
		}
	}
	return m
}

// RefDialogue and RefUser frame an imported scenario's provenance ref:
// "dialogue=ID user=USER", the P4G dialogue id (B2) and the persuadee's
// user id (B3). The user id is an anonymous worker number; it says
// nothing about the profile, and the persuader is never shown provenance.
const (
	RefDialogue = "dialogue="
	RefUser     = " user="
)

// Ref returns the provenance ref of dialogue id with persuadee user.
func Ref(id, user string) string { return RefDialogue + id + RefUser + user }

// UserOf returns the P4G user id recorded in sc's provenance ref (see Ref),
// and false when the ref carries none (a scenario not from this importer,
// or from one before user ids were kept).
func UserOf(sc *scenario.Scenario) (string, bool) {
	_, u, ok := strings.Cut(sc.Provenance.Ref, RefUser)
	if !ok || u == "" {
		return "", false
	}
	return u, true
}

// readInfo reads full_info.csv: every row is checked (numbers must parse,
// roles must be 0 or 1, one persuadee per dialogue); persuadee rows are
// returned in file order.
func readInfo(path string, rep *Report) ([]*persuadee, error) {
	req := []string{"B2", "B3", "B4", "B6", "B7"}
	for _, k := range TraitKeys {
		req = append(req, k+".x")
	}
	for _, k := range demoKeys {
		req = append(req, k+".x")
	}
	t, err := readTable(path, req)
	if err != nil {
		return nil, err
	}
	rep.InfoRows = len(t.rows)
	dialogues := map[string]bool{}
	firstLine := map[string]int{}
	var out []*persuadee
	for i := range t.rows {
		id := t.get(i, "B2")
		if id == "" {
			return nil, t.errf(i, "B2", "empty dialogue id")
		}
		dialogues[id] = true
		role, err := t.role(i)
		if err != nil {
			return nil, err
		}
		// Every row's numbers are checked, persuader rows included, so
		// a malformed file is reported rather than half-read.
		p := &persuadee{id: id, user: t.get(i, "B3"), line: t.lines[i], complete: true,
			survey: Survey{Scores: make(map[string]float64, len(TraitKeys))}}
		if d, ok, err := t.float(i, "B6"); err != nil {
			return nil, err
		} else if ok {
			if d < 0 {
				return nil, t.errf(i, "B6", "negative donation %g", d)
			}
			p.donation = &d
		}
		if n, _, err := t.int(i, "B7"); err != nil {
			return nil, err
		} else {
			p.turns = n
		}
		for _, k := range TraitKeys {
			v, ok, err := t.float(i, k+".x")
			if err != nil {
				return nil, err
			}
			if !ok {
				p.complete = false
				continue
			}
			p.survey.Scores[k] = v
		}
		demo := make([]string, len(demoKeys))
		for j, k := range demoKeys {
			demo[j] = t.get(i, k+".x")
			if demo[j] == "" {
				p.complete = false
			}
		}
		p.survey.Sex, p.survey.Edu, p.survey.Marital = demo[0], demo[2], demo[3]
		p.survey.Employment, p.survey.Religion, p.survey.Ideology = demo[4], demo[5], demo[6]
		if role == 0 {
			rep.PersuaderRows++
			continue
		}
		rep.PersuadeeRows++
		if p.user == "" {
			return nil, t.errf(i, "B3", "empty user id")
		}
		if first, dup := firstLine[id]; dup {
			return nil, t.errf(i, "B2", "dialogue %s has a second persuadee (first on line %d)", id, first)
		}
		firstLine[id] = t.lines[i]
		out = append(out, p)
	}
	rep.Dialogues = len(dialogues)
	return out, nil
}

// readDialog reads full_dialog.csv into per-dialogue persuader sentences.
func readDialog(path string, rep *Report) (map[string]*dialog, error) {
	t, err := readTable(path, []string{"Unit", "Turn", "B4", "B2"})
	if err != nil {
		return nil, err
	}
	rep.DialogRows = len(t.rows)
	out := map[string]*dialog{}
	for i := range t.rows {
		id, turn, role, err := t.unit(i)
		if err != nil {
			return nil, err
		}
		d := out[id]
		if d == nil {
			d = &dialog{persuader: map[int][]string{}}
			out[id] = d
		}
		d.rows++
		d.maxTurn = max(d.maxTurn, turn)
		if u := t.get(i, "Unit"); role == 0 && u != "" {
			d.persuader[turn] = append(d.persuader[turn], u)
		}
	}
	rep.DialogDialogues = len(out)
	return out, nil
}

// readAnnotatedInfo reads the persuadees' intended donations (B5) from
// 300_info.csv; an empty B5 is absent from the map.
func readAnnotatedInfo(path string) (map[string]float64, error) {
	t, err := readTable(path, []string{"B2", "B4", "B5"})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i := range t.rows {
		role, err := t.role(i)
		if err != nil {
			return nil, err
		}
		v, ok, err := t.float(i, "B5")
		if err != nil {
			return nil, err
		}
		if role != 1 || !ok {
			continue
		}
		if v < 0 {
			return nil, t.errf(i, "B5", "negative donation %g", v)
		}
		out[t.get(i, "B2")] = v
	}
	return out, nil
}

// annotation is the persuadee acts of one annotated dialogue, per turn.
type annotation struct {
	acts    map[int][]string
	maxTurn int
}

// readAnnotatedDialog reads 300_dialog.csv: for each dialogue, the
// persuadee units' ee_label_1 and ee_label_2 (non-empty, in file order)
// grouped by turn.
func readAnnotatedDialog(path string) (map[string]*annotation, error) {
	t, err := readTable(path, []string{"B2", "B4", "Turn", "ee_label_1", "ee_label_2"})
	if err != nil {
		return nil, err
	}
	out := map[string]*annotation{}
	for i := range t.rows {
		id, turn, role, err := t.unit(i)
		if err != nil {
			return nil, err
		}
		a := out[id]
		if a == nil {
			a = &annotation{acts: map[int][]string{}}
			out[id] = a
		}
		a.maxTurn = max(a.maxTurn, turn)
		if role != 1 {
			continue
		}
		for _, col := range []string{"ee_label_1", "ee_label_2"} {
			if l := t.get(i, col); l != "" {
				a.acts[turn] = append(a.acts[turn], l)
			}
		}
	}
	return out, nil
}

// Public text shared by every P4G scenario.
const (
	domain           = "charity donation: Save the Children"
	proposal         = "Donate part of your task payment to Save the Children: any amount from $0 up to your full $2."
	acceptMeans      = "The persuadee pledges a donation (more than $0) from their task payment."
	conditionalMeans = "The persuadee would donate only under a condition, for example a smaller amount than suggested, or only after checking the charity first."
	persuaderRole    = "a fellow crowd worker whom the researchers asked to raise donations for Save the Children"
	persuadeeRole    = "a crowd worker taking part in the same paid research task"
	relationship     = "strangers on a research platform"
	background       = "Both people are paid crowd workers in an online research task about charity. " +
		"After this chat the persuadee may give any part of their $2 task payment to Save the Children; " +
		"the research team deducts the amount chosen and passes it on. " +
		"Save the Children is an international non-governmental organisation founded in 1919 that works for " +
		"children's rights, health, education and emergency relief in many countries, including the United States."
	constraint = "Any donation comes out of my own task payment, so it can be at most $2."
	source     = "PersuasionForGood (Wang et al., ACL 2019)"
	license    = "Apache-2.0"
)

// build renders one persuadee as a scenario.
func build(p *persuadee, n *Norms, split scenario.Split, d *dialog, ann *annotation, intended map[string]float64, rep *Report) scenario.Scenario {
	traits := make(map[string]float64, len(TraitKeys)+len(CodedTraitKeys))
	for _, k := range TraitKeys {
		traits[k] = p.survey.Scores[k]
	}
	traits[TraitIdeology] = p.survey.variable("ideology_num")
	traits[TraitReligiosity] = p.survey.variable("religiosity")
	stance := n.InitialStance(p.survey)
	if p.survey.Scores["age"] < 18 {
		rep.ImplausibleAge++
	}
	// Choice: a few participants typed amounts above the $2 they could
	// give (e.g. "50" or "700"); they did intend to give, so the amount is
	// capped at MaxDonation rather than guessed (cents? dollars?).
	donation := *p.donation
	if donation > MaxDonation {
		rep.DonationCapped++
		donation = MaxDonation
	}
	out := &scenario.Outcome{Donation: &donation, Turns: p.turns}
	// One utterance per turn of the real dialogue, "" where the persuader
	// said nothing in that turn.
	nt := d.maxTurn + 1
	out.PersuaderUtterances = make([]string, nt)
	for t := range nt {
		out.PersuaderUtterances[t] = strings.Join(d.persuader[t], " ")
	}
	if ann != nil {
		na := max(nt, ann.maxTurn+1)
		out.PersuadeeActs = make([][]string, na)
		for t := range na {
			out.PersuadeeActs[t] = append([]string{}, ann.acts[t]...) // never nil: [] in JSON
		}
		if v, ok := intended[p.id]; ok {
			if v > MaxDonation {
				rep.IntendedCapped++
				v = MaxDonation
			}
			out.IntendedDonation = &v
		}
	}
	return scenario.Scenario{
		ID: "p4g-" + p.id, Split: split, Domain: domain, Family: scenario.Charity,
		Proposal: proposal, AcceptMeans: acceptMeans, ConditionalMeans: conditionalMeans,
		Persuader: scenario.Party{Role: persuaderRole}, Persuadee: scenario.Party{Role: persuadeeRole},
		Relationship: relationship, Closeness: scenario.Strangers, Background: background,
		Hidden: scenario.HiddenProfile{
			Persona:       n.Persona(p.survey),
			Motivation:    n.Motivation(p.survey, stance),
			Resistance:    ResistanceOf(n.Propensities(p.survey)),
			Concerns:      n.Concerns(p.survey),
			Constraints:   []string{constraint},
			InitialStance: stance,
			Traits:        traits,
		},
		Outcome:    out,
		Provenance: scenario.Provenance{Source: source, Ref: Ref(p.id, p.user), License: license},
	}
}
