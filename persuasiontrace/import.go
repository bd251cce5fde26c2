// Package persuasiontrace imports PersuasionTrace (PersuasionTrace paper:
// Moore, Goodman, Haber & Kleiman-Weiner 2026, "A Model of Multi-turn Human
// Persuadability Using Probabilistic Belief Tracing"; upstream
// github.com/jlcmoore/persuasiontrace, MIT): rounds in which an LLM persuader argued one side of a proposition
// with a real person, who reported their belief in the proposition before
// the dialogue, after each of their replies, and at the end.
//
// Import reads the upstream exporter's files (each a JSON array of rounds)
// from any folder tree; each kept Round carries the person's reports at the
// positions they were made and becomes a scenario (Round.Scenario) whose
// real persuader messages package fidelity replays open-loop. The rules that
// turn a round into a hidden profile are deterministic and documented in
// docs/fidelity.md ("PersuasionTrace").
package persuasiontrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// Upstream message roles.
const (
	RolePersuader = "persuader"
	RoleTarget    = "target"
)

// Message is one message of a round, in order.
type Message struct {
	// Role is RolePersuader or RoleTarget (the person).
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Report is one belief the person reported, read persuader-relative.
type Report struct {
	// Position is the number of persuader messages the person had read
	// when reporting (1-based): report k of serial_questions follows
	// persuader message k, and the final report follows the last one.
	Position int `json:"position"`
	// Belief is the reported belief that the persuader's side is right, in
	// [0, 1]: the belief in the proposition when the persuader supports it,
	// else 1 minus it.
	Belief float64 `json:"belief"`
	// Final marks target_final_belief (the report after the dialogue).
	Final bool `json:"final"`
}

// Round is one imported round.
type Round struct {
	// ID is "pt-" followed by the file's path under the import directory
	// (separators and the extension's dot as "-") and the round's 0-based
	// index in the file, three digits: "pt-c01-2026-01-26-003".
	ID string `json:"id"`
	// File is the file's path under the import directory (slash
	// separated), Index the round's position in its array and Line the
	// line of its opening brace.
	File  string `json:"file"`
	Index int    `json:"index"`
	Line  int    `json:"line"`
	// Person is the upstream human_target_id: the unit of grouping.
	Person string `json:"person"`
	// Proposition is the statement the person's beliefs are about, and
	// Topic the one the dialogue was about (proposition_during_round;
	// another statement in control rounds, "" when absent).
	Proposition string `json:"proposition"`
	Topic       string `json:"topic,omitempty"`
	// Supports is persuader_supports_proposition: the persuader's side.
	Supports bool `json:"supports"`
	// Control marks an off-topic control dialogue (condition
	// control_dialogue), the upstream no-persuasion control.
	Control bool `json:"control"`
	// Personal marks a proposition the participant wrote about their own
	// life (condition participant_proposition).
	Personal bool `json:"personal"`
	// Audio (use_audio), NodeSurvey (enable_node_belief_survey) and
	// TurnLimit (turn_limit, 0 when absent) are the condition flags the
	// upstream cluster sample was selected by.
	Audio      bool `json:"audio"`
	NodeSurvey bool `json:"node_survey"`
	TurnLimit  int  `json:"turn_limit"`
	// Initial and Final are target_initial_belief and target_final_belief,
	// raw beliefs in the proposition, in [0, 1]; Serial is
	// serial_questions, the beliefs reported as each persuader message
	// arrived (but the last), in the proposition, except in control rounds:
	// there the statement shown during the dialogue, and so asked about, is
	// Topic (upstream src/experiment/round.py, Round.prompt with
	// during_round, and frontend/src/components/round/RoundVue.vue,
	// displayedPrompt, at commit d05007f).
	Initial float64   `json:"initial"`
	Final   float64   `json:"final"`
	Serial  []float64 `json:"serial"`
	// Messages is the dialogue, in order.
	Messages []Message `json:"messages"`
}

// Relative returns belief b in the proposition as a belief in the
// persuader's side: b when the persuader supports the proposition, else
// 1 - b.
func (r *Round) Relative(b float64) float64 {
	if r.Supports {
		return b
	}
	return 1 - b
}

// Start is the person's initial belief in the persuader's side, in [0, 1].
func (r *Round) Start() float64 { return r.Relative(r.Initial) }

// Shift is the person's final belief change toward the persuader's side,
// Relative(Final) - Relative(Initial), in [-1, 1] (the upstream
// Round.target_belief_change).
func (r *Round) Shift() float64 { return r.Relative(r.Final) - r.Start() }

// PersuaderMessages returns the persuader's messages in order.
func (r *Round) PersuaderMessages() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == RolePersuader {
			out = append(out, m.Content)
		}
	}
	return out
}

// Reports returns the person's reports on the proposition after the
// start, in order: report k (1-based) of Serial at Position k, then the
// final one at the position of the last persuader message. Serial report k
// is the one attached to the person's k-th reply (upstream
// src/api/sql_model.py, RoundORM.as_round, at commit d05007f), asked as
// persuader message k arrived. A control round has only the final report:
// its serial reports are on Topic, another statement.
func (r *Round) Reports() []Report {
	out := make([]Report, 0, len(r.Serial)+1)
	for k, b := range r.Serial {
		if r.Control {
			break
		}
		out = append(out, Report{Position: k + 1, Belief: r.Relative(b)})
	}
	return append(out, Report{Position: len(r.PersuaderMessages()), Belief: r.Relative(r.Final), Final: true})
}

// Trajectory returns the person's per-report belief changes toward the
// persuader's side over Serial alone, from the initial belief (the
// upstream extract_round_updates in src/simulation/human_trajectory_clusters.py,
// commit d05007f, which leaves the final report out); nil without serial
// reports and for control rounds (whose serial reports are on another
// statement than the initial belief).
func (r *Round) Trajectory() []float64 {
	if len(r.Serial) == 0 || r.Control {
		return nil
	}
	out := make([]float64, len(r.Serial))
	prev := r.Start()
	for k, b := range r.Serial {
		out[k] = r.Relative(b) - prev
		prev = r.Relative(b)
	}
	return out
}

// Skip reasons, as counted in Summary.Skipped.
const (
	SkipMeasure     = "continuous measure is not serial-questions"
	SkipNoMessages  = "no messages"
	SkipNoReports   = "no per-reply belief reports (serial_questions empty)"
	SkipNoPersuader = "no persuader message"
	SkipAmbiguous   = "fewer serial reports than replies (report positions unknown)"
)

// SkipReasons lists the skip reasons in report order.
var SkipReasons = []string{SkipMeasure, SkipNoMessages, SkipNoReports, SkipNoPersuader, SkipAmbiguous}

// Summary counts an import.
type Summary struct {
	// Dir is the directory read; Files the round files found under it.
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	// Read is the number of rounds in the files; Skipped counts those left
	// out, by reason (SkipReasons).
	Read    int            `json:"read"`
	Skipped map[string]int `json:"skipped"`
	// Persuasion and Control count the kept rounds of each kind, and
	// PersuasionPeople and ControlPeople their distinct people; People is
	// the distinct people over all kept rounds.
	Persuasion       int `json:"persuasion"`
	Control          int `json:"control"`
	People           int `json:"people"`
	PersuasionPeople int `json:"persuasion_people"`
	ControlPeople    int `json:"control_people"`
	// Reports is the number of reports on the proposition after the start
	// over the kept rounds (Round.Reports).
	Reports int `json:"reports"`
}

// ErrNoRounds is returned by Import when no round file is found.
var ErrNoRounds = errors.New("persuasiontrace: no round files")

// Import reads every round file under dir (any folder names and nesting;
// a file ending in .jsonl or .json, each one JSON array of upstream round
// objects; other files, such as INDEX.tsv or LICENSE.md, are ignored), in
// lexical path order, and returns the rounds that can be replayed and
// compared: serial-questions rounds with at least one persuader message and
// at least one per-reply report, one on every reply but perhaps the one to
// the last persuader message (so that report k follows persuader message
// k). The others are counted in Summary.Skipped.
//
// Errors name file, line and field: a file that is not a JSON array of
// objects; a kept round without a proposition, person
// (human_target_id), side (persuader_supports_proposition) or initial or
// final belief; a belief outside [0, 1]; a message of unknown role; more
// serial reports than the person's replies or than persuader messages;
// two files whose paths give the same round ids (x.json and x.jsonl).
// ErrNoRounds when dir holds no round file.
func Import(dir string) ([]Round, *Summary, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".json")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("persuasiontrace: %w", err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%w under %s", ErrNoRounds, dir)
	}
	sum := &Summary{Dir: dir, Files: len(files), Skipped: map[string]int{}}
	var out []Round
	people, pp, cp := map[string]bool{}, map[string]bool{}, map[string]bool{}
	fileOf := map[string]string{} // round id -> file, to refuse two files with the same ids
	for _, path := range files {
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return nil, nil, fmt.Errorf("persuasiontrace: %w", err)
		}
		rs, n, err := readFile(path, filepath.ToSlash(rel), sum.Skipped)
		if err != nil {
			return nil, nil, err
		}
		sum.Read += n
		for _, r := range rs {
			if f, dup := fileOf[r.ID]; dup {
				return nil, nil, fmt.Errorf("persuasiontrace: %s and %s both give round id %s (ids come from the path with separators and dots as \"-\"): rename one", f, r.File, r.ID)
			}
			fileOf[r.ID] = r.File
			people[r.Person] = true
			if r.Control {
				sum.Control++
				cp[r.Person] = true
			} else {
				sum.Persuasion++
				pp[r.Person] = true
			}
			sum.Reports += len(r.Reports())
		}
		out = append(out, rs...)
	}
	sum.People, sum.PersuasionPeople, sum.ControlPeople = len(people), len(pp), len(cp)
	return out, sum, nil
}

// rawRound is the part of an upstream round object the importer reads;
// pointers tell a missing field from a zero one.
type rawRound struct {
	Proposition *string         `json:"proposition"`
	During      *string         `json:"proposition_during_round"`
	Initial     *float64        `json:"target_initial_belief"`
	Final       *float64        `json:"target_final_belief"`
	Supports    *bool           `json:"persuader_supports_proposition"`
	Person      json.RawMessage `json:"human_target_id"`
	Messages    []rawMessage    `json:"messages"`
	Serial      []*float64      `json:"serial_questions"`
	Condition   struct {
		Measure    string `json:"continuous_measure"`
		Control    *bool  `json:"control_dialogue"`
		Personal   *bool  `json:"participant_proposition"`
		Audio      *bool  `json:"use_audio"`
		NodeSurvey *bool  `json:"enable_node_belief_survey"`
		TurnLimit  *int   `json:"turn_limit"`
	} `json:"condition"`
}

type rawMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
}

// FieldError is a problem in one field of one round.
type FieldError struct {
	// File is the path under the import directory, Line the line of the
	// round's opening brace (1-based), Index its position in the array.
	File  string
	Line  int
	Index int
	// Field is the upstream field name ("serial_questions[2]").
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s:%d: round %d: %s: %s", e.File, e.Line, e.Index, e.Field, e.Problem)
}

// readFile decodes one file's array; it returns the kept rounds and the
// number read, adding skips to skipped.
func readFile(path, rel string, skipped map[string]int) ([]Round, int, error) {
	data, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, 0, fmt.Errorf("persuasiontrace: %w", err)
	}
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, 0, fmt.Errorf("%s:%d: want a JSON array of rounds (the upstream exporter's format): %w", rel, lineAt(dec.InputOffset()), err)
	}
	if tok != json.Delim('[') {
		return nil, 0, fmt.Errorf("%s:%d: want a JSON array of rounds (the upstream exporter's format), found %v", rel, lineAt(dec.InputOffset()), tok)
	}
	id := "pt-" + strings.NewReplacer("/", "-", ".", "-", " ", "_").Replace(strings.TrimSuffix(strings.TrimSuffix(rel, ".jsonl"), ".json"))
	var out []Round
	n := 0
	for dec.More() {
		off := dec.InputOffset()
		for off < int64(len(data)) && (data[off] == ',' || data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t') {
			off++
		}
		line := lineAt(off)
		var raw rawRound
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: round %d: %w", rel, line, n, err)
		}
		r, skip, err := convert(&raw, rel, line, n)
		if err != nil {
			return nil, 0, err
		}
		if skip != "" {
			skipped[skip]++
		} else {
			r.ID = fmt.Sprintf("%s-%03d", id, n)
			out = append(out, r)
		}
		n++
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("%s:%d: after round %d: %w", rel, lineAt(dec.InputOffset()), n, err)
	}
	return out, n, nil
}

// convert checks one raw round; skip is a skip reason ("" when kept).
func convert(raw *rawRound, file string, line, index int) (r Round, skip string, err error) {
	bad := func(field, format string, args ...any) error {
		return &FieldError{File: file, Line: line, Index: index, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if raw.Condition.Measure != "serial-questions" {
		return r, SkipMeasure, nil
	}
	if len(raw.Messages) == 0 {
		return r, SkipNoMessages, nil
	}
	if len(raw.Serial) == 0 {
		return r, SkipNoReports, nil
	}
	r = Round{File: file, Line: line, Index: index}
	if raw.Proposition == nil || strings.TrimSpace(*raw.Proposition) == "" {
		return r, "", bad("proposition", "missing or empty")
	}
	r.Proposition = strings.TrimSpace(*raw.Proposition)
	if raw.During != nil {
		r.Topic = strings.TrimSpace(*raw.During)
	}
	if raw.Supports == nil {
		return r, "", bad("persuader_supports_proposition", "missing (want true or false)")
	}
	r.Supports = *raw.Supports
	p := strings.Trim(string(bytes.TrimSpace(raw.Person)), `"`)
	if p == "" || p == "null" {
		return r, "", bad("human_target_id", "missing: every round needs its person")
	}
	r.Person = p
	belief := func(field string, v *float64) (float64, error) {
		if v == nil {
			return 0, bad(field, "missing")
		}
		if !(*v >= 0 && *v <= 1) {
			return 0, bad(field, "%g outside [0, 1]", *v)
		}
		return *v, nil
	}
	if r.Initial, err = belief("target_initial_belief", raw.Initial); err != nil {
		return r, "", err
	}
	if r.Final, err = belief("target_final_belief", raw.Final); err != nil {
		return r, "", err
	}
	targets, persuaders := 0, 0
	for i, m := range raw.Messages {
		switch m.Role {
		case RolePersuader:
			persuaders++
		case RoleTarget:
			targets++
		default:
			return r, "", bad(fmt.Sprintf("messages[%d].role", i), "%q (want %q or %q)", m.Role, RolePersuader, RoleTarget)
		}
		c := ""
		if m.Content != nil {
			c = *m.Content
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: c})
	}
	if persuaders == 0 {
		return Round{}, SkipNoPersuader, nil
	}
	for k, v := range raw.Serial {
		b, err := belief("serial_questions["+strconv.Itoa(k)+"]", v)
		if err != nil {
			return r, "", err
		}
		r.Serial = append(r.Serial, b)
	}
	if len(r.Serial) > targets || len(r.Serial) > persuaders {
		return r, "", bad("serial_questions", "%d reports for %d replies and %d persuader messages (want one per reply at most)", len(r.Serial), targets, persuaders)
	}
	// Every reply but one to the last persuader message carries a report;
	// upstream as_round leaves a reply without one out of
	// serial_questions, so with fewer reports their positions are unknown.
	if len(r.Serial) < min(targets, persuaders-1) {
		return Round{}, SkipAmbiguous, nil
	}
	flag := func(b *bool) bool { return b != nil && *b }
	r.Control, r.Personal = flag(raw.Condition.Control), flag(raw.Condition.Personal)
	r.Audio, r.NodeSurvey = flag(raw.Condition.Audio), flag(raw.Condition.NodeSurvey)
	if raw.Condition.TurnLimit != nil {
		r.TurnLimit = *raw.Condition.TurnLimit
	}
	return r, "", nil
}

// Folds is the number of person-grouped folds (Fold).
const Folds = 5

// Fold returns person's fold in [0, Folds): FNV-1a 64 of
// "persuasiontrace:" + person, mod Folds.
//
// Choice: folds by person, never by round, so that a person's rounds are
// all on one side of every fit; a hash, not an order, so that adding
// rounds never moves a person to another fold.
func Fold(person string) int {
	h := fnv.New64a()
	h.Write([]byte("persuasiontrace:" + person))
	return int(h.Sum64() % Folds)
}

// MovedBy is the change toward the persuader's side a round must exceed to
// count as moved ("more than 0.1", the fidelity check's threshold).
//
// Choice: a change must exceed it by more than movedEps, so that a slider
// difference of exactly 0.1 (0.0825 to 0.1825, which float arithmetic
// gives as 0.10000000000000002) is not counted as more than 0.1.
const MovedBy = 0.1

const movedEps = 1e-9

// Moved reports whether a belief change toward the persuader's side is more
// than MovedBy.
func Moved(shift float64) bool { return shift > MovedBy+movedEps && !math.IsNaN(shift) }
