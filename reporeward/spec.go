package reporeward

import (
	"embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/llm"
)

// DefaultN is n of the composition E = clip(E_judge + E_func, -n, n),
// R = R_model·(1 + sign(R_model)·E/n) (REPO paper, secondary notes).
const DefaultN = 100

// The compositions of a spec.
const (
	// ComposeREPO is R = R_model·(1 + sign(R_model)·E/n).
	ComposeREPO = "repo"
	// ComposeWeighted is the documented alternative R = w_model·R_model +
	// w_judge·E_judge/n + w_func·E_func/n.
	ComposeWeighted = "weighted"
)

// The reward model kinds of ModelSpec.Kind.
const (
	ModelOutcome  = "outcome"  // R_model = the episode's R_goal (simulator runs)
	ModelConstant = "constant" // R_model = Value
	ModelHTTP     = "http"     // an engine's reward/score model (HTTPModel)
	ModelBT       = "bt"       // the embedded Bradley–Terry model (BT)
)

// The rule function kinds of RuleSpec.Kind.
const (
	RuleForbid     = "forbid"     // violated when a pattern matches an utterance
	RuleRequire    = "require"    // episode: violated when no utterance matches a pattern
	RuleCommission = "commission" // every percentage must lie in the facts' allowed range
	RuleFigures    = "figures"    // every money amount must be one of the facts' figures
	RuleLength     = "length"     // at most MaxWords words per utterance
	RuleSOP        = "sop"        // SOP stages entered in order, none skipped
)

var (
	ruleKinds  = []string{RuleForbid, RuleRequire, RuleCommission, RuleFigures, RuleLength, RuleSOP}
	modelKinds = []string{ModelOutcome, ModelConstant, ModelHTTP, ModelBT}
	nameRE     = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// Spec is a heterogeneous reward spec (REPO paper): a reward model, judge
// rubrics and rule functions and how they compose. See docs/repo.md for
// the format; LoadSpec reads and validates it.
type Spec struct {
	// Name names the spec in reward vectors (RewardVector.Spec).
	Name string `yaml:"name"`
	// N is n of the composition, > 0; 0 means DefaultN.
	N float64 `yaml:"n"`
	// Composition is ComposeREPO (default) or ComposeWeighted.
	//
	// Choice: the REPO composition; the weighted sum is the documented
	// alternative (it rewards good conduct even when R_model is 0).
	Composition string `yaml:"composition"`
	// Weights are the weighted sum's w_model, w_judge, w_func (each 0
	// means 1); unused by the REPO composition.
	Weights struct {
		Model float64 `yaml:"model"`
		Judge float64 `yaml:"judge"`
		Func  float64 `yaml:"func"`
	} `yaml:"weights"`
	Model  ModelSpec    `yaml:"model"`
	Judges []RubricSpec `yaml:"judges"`
	Rules  []RuleSpec   `yaml:"rules"`
	// Pack names the scenario pack whose facts and SOP stages the rule
	// functions read: "negotiation" (built in) or a pack YAML file; ""
	// means "negotiation".
	Pack string `yaml:"pack"`

	file string
}

// ModelSpec configures R_model.
type ModelSpec struct {
	// Kind is one of outcome, constant, http, bt.
	Kind string `yaml:"kind"`
	// Value is the constant R_model (kind constant).
	Value float64 `yaml:"value"`
	// Scale multiplies the model's score (0 means 1).
	Scale float64 `yaml:"scale"`
	// URL is the engine's base URL, API its endpoint (HTTPModel: APIs) and
	// Model the served model name (kind http).
	URL   string `yaml:"url"`
	API   string `yaml:"api"`
	Model string `yaml:"model"`
	// Path is the Bradley–Terry model JSON written by bt-train (kind bt),
	// relative to the spec file.
	Path string `yaml:"path"`
}

// RubricSpec is one LLM-judge rubric of E_judge.
type RubricSpec struct {
	// Name is lower_snake_case; its component is "judge.NAME".
	Name string `yaml:"name"`
	// Prompt says what to rate, in the judge's terms.
	Prompt string `yaml:"prompt"`
	// Scale is [lo, hi] of the judge's score, lo < hi (e.g. [1, 5]); a
	// score s counts as 2(s-lo)/(hi-lo) - 1 in [-1, 1].
	Scale []float64 `yaml:"scale"`
	// Weight >= 0 multiplies the mapped score in E_judge.
	Weight float64 `yaml:"weight"`
	// Per is "episode" (default: the whole conversation) or "turn" (each
	// persuader utterance in its context; the episode value is the mean).
	Per string `yaml:"per"`
}

// RuleSpec is one rule function of E_func. Each rule's value is -1 when
// violated and 0 otherwise, per turn; weighted by Weight.
type RuleSpec struct {
	// Name is lower_snake_case; its component is "func.NAME".
	Name string `yaml:"name"`
	// Kind is one of forbid, require, commission, figures, length, sop.
	Kind string `yaml:"kind"`
	// Weight >= 0 multiplies the rule's value in E_func.
	Weight float64 `yaml:"weight"`
	// Patterns are Go regular expressions, matched case-insensitively
	// (forbid, require).
	Patterns []string `yaml:"patterns"`
	// MaxWords bounds an utterance's words (length).
	MaxWords int `yaml:"max_words"`
	// Tolerance is the relative tolerance of a figure match (figures; 0
	// means 0.005).
	Tolerance float64 `yaml:"tolerance"`

	res []*regexp.Regexp
}

// SpecError is a problem of a spec or pack file: "file:line: field: msg".
type SpecError = llm.ConfigError

//go:embed specs/*.yaml pack/*.yaml pack/*.jsonl
var builtin embed.FS

// BuiltinSpecs lists the built-in specs, named as repo:NAME resolves them.
var BuiltinSpecs = []string{"negotiation", "negotiation-judged"}

// LoadSpec reads a reward spec: a built-in name (BuiltinSpecs) or a YAML
// file path. Errors are *SpecError naming file, line and field (YAML
// syntax, unknown fields, unknown kinds, bad weights, scales and
// patterns), or the file's read error.
func LoadSpec(ref string) (*Spec, error) {
	if slices.Contains(BuiltinSpecs, ref) {
		b, err := builtin.ReadFile("specs/" + ref + ".yaml")
		if err != nil {
			return nil, err
		}
		return ParseSpec("builtin:"+ref, b)
	}
	b, err := filelimit.ReadFile(ref, filelimit.Spec)
	if err != nil {
		return nil, fmt.Errorf("reward spec: %w", err)
	}
	return ParseSpec(ref, b)
}

// ParseSpec is LoadSpec on data already read; file names it in errors.
func ParseSpec(file string, data []byte) (*Spec, error) {
	var s Spec
	lines, err := llm.DecodeYAML(file, data, &s)
	if err != nil {
		return nil, err
	}
	at := func(field, format string, a ...any) error { return llm.FieldError(file, lines, field, format, a...) }
	s.file = file
	if s.Name == "" {
		return nil, at("name", "missing")
	}
	if s.N == 0 {
		s.N = DefaultN
	}
	switch {
	case s.N < 0 || math.IsNaN(s.N) || math.IsInf(s.N, 0):
		return nil, at("n", "%v: want a number > 0", s.N)
	case s.Composition == "":
		s.Composition = ComposeREPO
	case s.Composition != ComposeREPO && s.Composition != ComposeWeighted:
		return nil, at("composition", "%q: want repo or weighted", s.Composition)
	}
	for _, w := range []*float64{&s.Weights.Model, &s.Weights.Judge, &s.Weights.Func} {
		if *w == 0 {
			*w = 1
		}
	}
	m := &s.Model
	if m.Kind == "" {
		m.Kind = ModelOutcome
	}
	if m.Scale == 0 {
		m.Scale = 1
	}
	switch {
	case !slices.Contains(modelKinds, m.Kind):
		return nil, at("model.kind", "%q: want one of %s", m.Kind, strings.Join(modelKinds, ", "))
	case m.Kind == ModelHTTP && m.URL == "":
		return nil, at("model.url", "missing (the engine's base URL, e.g. http://localhost:8000)")
	case m.Kind == ModelHTTP && !slices.Contains(APIs, m.API):
		return nil, at("model.api", "%q: want one of %s", m.API, strings.Join(APIs, ", "))
	case m.Kind == ModelBT && m.Path == "":
		return nil, at("model.path", "missing (a Bradley–Terry model file written by persuarena repo bt-train)")
	}
	seen := map[string]string{}
	name := func(field, kind, n string) error {
		if !nameRE.MatchString(n) {
			return at(field, "%q: want lower_snake_case", n)
		}
		if prev, dup := seen[kind+n]; dup {
			return at(field, "duplicate name %q (also %s)", n, prev)
		}
		seen[kind+n] = field
		return nil
	}
	for i := range s.Judges {
		j := &s.Judges[i]
		f := fmt.Sprintf("judges[%d]", i)
		if err := name(f+".name", "judge.", j.Name); err != nil {
			return nil, err
		}
		if j.Per == "" {
			j.Per = "episode"
		}
		switch {
		case strings.TrimSpace(j.Prompt) == "":
			return nil, at(f+".prompt", "missing")
		case len(j.Scale) != 2 || !(j.Scale[0] < j.Scale[1]):
			return nil, at(f+".scale", "%v: want [lo, hi] with lo < hi, e.g. [1, 5]", j.Scale)
		case j.Weight < 0 || math.IsNaN(j.Weight):
			return nil, at(f+".weight", "%v: want a number >= 0", j.Weight)
		case j.Per != "episode" && j.Per != "turn":
			return nil, at(f+".per", "%q: want episode or turn", j.Per)
		}
	}
	for i := range s.Rules {
		r := &s.Rules[i]
		f := fmt.Sprintf("rules[%d]", i)
		if err := name(f+".name", "func.", r.Name); err != nil {
			return nil, err
		}
		switch {
		case !slices.Contains(ruleKinds, r.Kind):
			return nil, at(f+".kind", "%q: want one of %s", r.Kind, strings.Join(ruleKinds, ", "))
		case r.Weight < 0 || math.IsNaN(r.Weight):
			return nil, at(f+".weight", "%v: want a number >= 0", r.Weight)
		case (r.Kind == RuleForbid || r.Kind == RuleRequire) && len(r.Patterns) == 0:
			return nil, at(f+".patterns", "missing: a %s rule needs at least one pattern", r.Kind)
		case r.Kind == RuleLength && r.MaxWords < 1:
			return nil, at(f+".max_words", "%d: want >= 1", r.MaxWords)
		case r.Tolerance < 0:
			return nil, at(f+".tolerance", "%v: want >= 0", r.Tolerance)
		}
		if r.Tolerance == 0 {
			r.Tolerance = 0.005
		}
		for k, p := range r.Patterns {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, at(fmt.Sprintf("%s.patterns[%d]", f, k), "%q: %v", p, err)
			}
			r.res = append(r.res, re)
		}
	}
	if len(s.Judges) == 0 && len(s.Rules) == 0 && m.Kind == ModelOutcome && s.Composition == ComposeREPO {
		return nil, at("rules", "a spec needs at least one judge rubric or rule function on top of the outcome")
	}
	if s.Pack == "" {
		s.Pack = "negotiation"
	}
	return &s, nil
}

// File is where the spec was read from ("builtin:NAME" for a built-in).
func (s *Spec) File() string { return s.file }

// NeedsJudge reports whether the spec has judge rubrics (they need an LLM
// judge: Options.Judge).
func (s *Spec) NeedsJudge() bool { return len(s.Judges) > 0 }
