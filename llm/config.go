package llm

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// Backend is one OpenAI-compatible server (docs/engines.md). The zero values of
// the numeric fields take the documented defaults.
type Backend struct {
	// Name identifies the backend in roles and CLI shorthands (llm:NAME);
	// letters, digits, '.', '_' and '-'.
	Name string `yaml:"name"`
	// BaseURL is the OpenAI-compatible root including /v1, e.g.
	// http://127.0.0.1:8000/v1. Engine endpoints outside /v1 (/tokenize,
	// /health, ...) are resolved against it with the /v1 suffix removed.
	BaseURL string `yaml:"base_url"`
	// BaseURLs lists the base URLs (each of BaseURL's form) of several
	// replicas of one engine deployment: the same engine, model and flags
	// behind each URL. Give BaseURL or BaseURLs, not both. Each episode is
	// pinned to the replica with the fewest requests in flight and stays
	// there (Client.Affinity, docs/engines.md "Replicas"); MaxInFlight and
	// the circuit breaker apply per replica. A router URL (SGLang router,
	// vLLM production-stack, llm-d) is one BaseURL.
	BaseURLs []string `yaml:"base_urls"`
	// Engine is the engine profile.
	Engine Engine `yaml:"engine"`
	// Model is the served model name sent in every request.
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key; the key
	// itself is never in the config. Empty: no key is sent.
	APIKeyEnv string `yaml:"api_key_env"`
	// MaxInFlight bounds concurrent HTTP requests to this backend; default
	// 16.
	MaxInFlight int `yaml:"max_in_flight"`
	// Timeout bounds one HTTP attempt (a YAML duration such as "120s");
	// default 120s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetries is the most retries after the first attempt; default 10,
	// negative disables retries. RetryBudget usually ends them first.
	MaxRetries int `yaml:"max_retries"`
	// RetryBudget bounds one request's retries in time: once its backoff
	// waits total RetryBudget (the last one cut to fit), the next
	// transient fault is returned; default 10s, negative: MaxRetries
	// alone. Waits the server asked for (a 429's or 503's Retry-After,
	// each capped by MaxRetryWait) and waits on an open circuit
	// (circuitwait.go) do not count.
	//
	// Choice: a budget in time rather than in attempts, so that the
	// backoff can start short (100 ms, about one engine answer: single
	// faults waste little engine time) and a request still outlasts a
	// few seconds of outage, until the circuit opens and it waits there.
	RetryBudget time.Duration `yaml:"retry_budget"`
	// MaxTopLogprobs overrides the profile's top-logprobs cap (e.g. the
	// value of vLLM's --max-logprobs); 0 uses the profile default or what
	// Detect found.
	MaxTopLogprobs int `yaml:"max_top_logprobs"`
	// MaxRetryWait caps how long one Retry-After wait may last; default 60s.
	MaxRetryWait time.Duration `yaml:"max_retry_wait"`
	// BreakerFailures is the least number of failed attempts (5xx,
	// connection errors, timeouts) among the last 20 (and at least 80 %
	// of them, or every attempt of a fresh window) that opens the circuit
	// (breaker.go); default 5, negative disables the breaker.
	BreakerFailures int `yaml:"breaker_failures"`
	// BreakerCooldown is how long an open circuit rejects requests before a
	// half-open probe; default 30s.
	BreakerCooldown time.Duration `yaml:"breaker_cooldown"`
}

// Upper bounds of a config's numbers (Config.validate): a value over one
// is refused with its file, line and field before anything starts.
//
// Choice: far above any real setting (an engine serves a few hundred
// sequences at once, a top-logprobs list of 20), so that a typo such as
// max_in_flight: 9223372036854775807, which would size a semaphore of
// that many slots, is refused instead.
const (
	MaxConfigCount    = 4096
	MaxConfigRetries  = 100
	MaxConfigTokens   = 1 << 20
	MaxConfigDuration = 24 * time.Hour
)

// Defaults used by WithDefaults.
const (
	DefaultMaxInFlight     = 16
	DefaultTimeout         = 120 * time.Second
	DefaultMaxRetries      = 10
	DefaultRetryBudget     = 10 * time.Second
	DefaultMaxRetryWait    = 60 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
)

// WithDefaults returns b with zero numeric fields set to their defaults
// (negative MaxRetries / BreakerFailures / RetryBudget are kept: they
// disable the feature).
func (b Backend) WithDefaults() Backend {
	if b.MaxInFlight <= 0 {
		b.MaxInFlight = DefaultMaxInFlight
	}
	if b.Timeout <= 0 {
		b.Timeout = DefaultTimeout
	}
	if b.MaxRetries == 0 {
		b.MaxRetries = DefaultMaxRetries
	}
	if b.RetryBudget == 0 {
		b.RetryBudget = DefaultRetryBudget
	}
	if b.MaxRetryWait <= 0 {
		b.MaxRetryWait = DefaultMaxRetryWait
	}
	if b.BreakerFailures == 0 {
		b.BreakerFailures = DefaultBreakerFailures
	}
	if b.BreakerCooldown <= 0 {
		b.BreakerCooldown = DefaultBreakerCooldown
	}
	return b
}

// Sampling holds sampling parameters for a role; a nil pointer means the
// engine default.
type Sampling struct {
	// Temperature in [0, 2].
	Temperature *float64 `yaml:"temperature"`
	// TopP in (0, 1].
	TopP *float64 `yaml:"top_p"`
	// MaxTokens > 0 caps generated tokens; 0 omits the field (never sent as
	// <= 0, docs/engines.md).
	MaxTokens int `yaml:"max_tokens"`
	// Seed for engines that honour it.
	Seed *int64 `yaml:"seed"`
	// Extra holds engine-specific JSON fields merged into the request last
	// (they override PersuArena's own fields), e.g. {top_k: 20} on vLLM.
	Extra map[string]any `yaml:"extra"`
}

// Role binds an agent role to a backend and its sampling parameters.
type Role struct {
	// Backend is the name of a backend in Config.Backends.
	Backend string `yaml:"backend"`
	// Sampling parameters for the role's requests.
	Sampling Sampling `yaml:"sampling"`
	// Thinking: nil = engine default; false disables thinking (Qwen3:
	// chat_template_kwargs.enable_thinking=false).
	Thinking *bool `yaml:"thinking"`
	// Variant selects an LLM persuadee's conduct (package llmagent; the MASP
	// paper's §4 soft and hard users): "" or "default", "soft" (cooperative,
	// imitation-style: follows the persuader's lead and yields readily to
	// reasonable requests) or "hard" (rationally resisting: yields only to
	// concrete, honest reasons). Other roles ignore it.
	Variant string `yaml:"variant"`
	// Structured selects an LLM persuadee's decision protocol (package
	// llmagent, docs/llm-roles.md): "" or "false", a tagged last line
	// "DECISION: ..." on every engine (the default); "auto", a JSON object
	// {"reply", "decision"} under a JSON schema where the engine honours
	// structured output (Capabilities.StructuredOutput), else the tagged
	// line; "true", the JSON object, and an error at start-up where the
	// engine cannot constrain it. Probe forks never carry the JSON rule
	// (whatever the protocol, they are rendered in the text protocol).
	// Other roles ignore it.
	Structured string `yaml:"structured"`
}

// StructuredModes are the valid Role.Structured values ("" means "false").
var StructuredModes = []string{"auto", "true", "false"}

// PersuadeeVariants are the valid Role.Variant values ("" means
// "default").
var PersuadeeVariants = []string{"default", "soft", "hard"}

// Config is persuarena.yaml (docs/engines.md has the reference).
type Config struct {
	// Backends are the engines PersuArena may call.
	Backends []Backend `yaml:"backends"`
	// Roles maps a role name ("persuadee", "persuader", "judge" or any name
	// used by llm:NAME) to its backend and sampling.
	Roles map[string]Role `yaml:"roles"`
}

// Backend returns the backend called name. The error names the known
// backends.
func (c *Config) Backend(name string) (Backend, error) {
	for _, b := range c.Backends {
		if b.Name == name {
			return b, nil
		}
	}
	names := make([]string, len(c.Backends))
	for i, b := range c.Backends {
		names[i] = b.Name
	}
	return Backend{}, fmt.Errorf("llm: no backend %q (configured: %s)", name, strings.Join(names, ", "))
}

// Role returns the role called name and its backend. A name that is not a
// role but is a backend gives that backend with default sampling, so
// llm:NAME works for either.
func (c *Config) Role(name string) (Role, Backend, error) {
	if r, ok := c.Roles[name]; ok {
		b, err := c.Backend(r.Backend)
		if err != nil {
			return Role{}, Backend{}, fmt.Errorf("llm: role %q: %w", name, err)
		}
		return r, b, nil
	}
	if b, err := c.Backend(name); err == nil {
		return Role{Backend: name}, b, nil
	}
	roles := make([]string, 0, len(c.Roles))
	for k := range c.Roles {
		roles = append(roles, k)
	}
	slices.Sort(roles)
	return Role{}, Backend{}, fmt.Errorf("llm: no role or backend %q (roles: %s)", name, strings.Join(roles, ", "))
}

// ConfigError is a configuration problem at File:Line (Line 0 when the
// position is unknown) in Field (a path such as "backends[1].base_url").
type ConfigError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats "file:line: field: message".
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// secretKeys are field names that would hold a key literally.
	secretKeys = []string{"api_key", "apikey", "api-key", "openai_api_key", "authorization", "bearer_token"}
	// durationKeys are the Backend fields holding YAML durations.
	durationKeys = []string{"timeout", "max_retry_wait", "breaker_cooldown"}
)

// LoadConfig reads and validates a persuarena.yaml. Every error is a
// *ConfigError naming file, line and field: YAML syntax, unknown or
// mistyped fields, a literal API key (keys only come from api_key_env),
// unknown engines, bad URLs, duplicate backend names, roles naming unknown
// backends, out-of-range sampling values.
func LoadConfig(path string) (*Config, error) {
	data, err := filelimit.ReadFile(path, filelimit.Config)
	if err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig is LoadConfig on data already read; file names the source in
// errors.
func ParseConfig(file string, data []byte) (*Config, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(file, err)
	}
	lines := map[string]int{}
	var early *ConfigError
	for _, d := range f.Docs {
		walkYAML(d.Body, "", func(p string, key string, line int, v ast.Node) {
			if _, ok := lines[p]; !ok {
				lines[p] = line
			}
			if early != nil {
				return
			}
			if slices.Contains(secretKeys, strings.ToLower(key)) {
				early = &ConfigError{file, line, p, "API keys are never stored in the config: put the key in an environment variable and name that variable with api_key_env"}
			}
			// goccy reports bad durations without a position; check here.
			if slices.Contains(durationKeys, key) && strings.HasPrefix(p, "backends[") {
				if sv, ok := v.(*ast.StringNode); ok {
					if _, err := time.ParseDuration(sv.Value); err != nil {
						early = &ConfigError{file, line, p, fmt.Sprintf("%q: want a duration such as 120s or 2m", sv.Value)}
					}
				}
			}
		})
	}
	if early != nil {
		return nil, early
	}
	var c Config
	if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
		ce := yamlError(file, err)
		ce.Field = fieldAt(lines, ce.Line)
		return nil, ce
	}
	if err := c.validate(file, lines); err != nil {
		return nil, err
	}
	return &c, nil
}

// fieldAt returns the deepest field path starting on line (or "").
func fieldAt(lines map[string]int, line int) string {
	best := ""
	for p, l := range lines {
		if l == line && (len(p) > len(best) || (len(p) == len(best) && p < best)) {
			best = p
		}
	}
	return best
}

// yamlError turns a goccy error into a ConfigError with its line.
func yamlError(file string, err error) *ConfigError {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &ConfigError{File: file, Line: line, Msg: ye.GetMessage()}
	}
	return &ConfigError{File: file, Msg: err.Error()}
}

// walkYAML calls fn for every mapping key and sequence item under n with
// its dotted path, the key text, its line and its value node.
func walkYAML(n ast.Node, path string, fn func(path, key string, line int, value ast.Node)) {
	switch n := n.(type) {
	case nil:
	case *ast.DocumentNode:
		walkYAML(n.Body, path, fn)
	case *ast.TagNode:
		walkYAML(n.Value, path, fn)
	case *ast.AnchorNode:
		walkYAML(n.Value, path, fn)
	case *ast.MappingNode:
		for _, v := range n.Values {
			walkYAML(v, path, fn)
		}
	case *ast.MappingValueNode:
		key := ""
		if tk := n.Key.GetToken(); tk != nil {
			key = tk.Value
		}
		p := key
		if path != "" {
			p = path + "." + key
		}
		line := 0
		if tk := n.Key.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		fn(p, key, line, n.Value)
		walkYAML(n.Value, p, fn)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			if tk := v.GetToken(); tk != nil && tk.Position != nil {
				fn(p, "", tk.Position.Line, v)
			}
			walkYAML(v, p, fn)
		}
	}
}

// DecodeYAML strictly decodes the YAML document data into v (unknown
// fields are errors) and returns the line of every field path in it
// ("rules[2].kind" -> 14), for FieldError. file names the source in
// errors; every error is a *ConfigError with file, line and field. Other
// packages' YAML files (the REPO paper's reward specs, package reporeward) are
// read this way so their errors look like persuarena.yaml's.
func DecodeYAML(file string, data []byte, v any) (map[string]int, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(file, err)
	}
	lines := map[string]int{}
	for _, d := range f.Docs {
		walkYAML(d.Body, "", func(p string, _ string, line int, _ ast.Node) {
			if _, ok := lines[p]; !ok {
				lines[p] = line
			}
		})
	}
	if err := yaml.UnmarshalWithOptions(data, v, yaml.Strict()); err != nil {
		ce := yamlError(file, err)
		ce.Field = fieldAt(lines, ce.Line)
		return nil, ce
	}
	return lines, nil
}

// FieldError returns the *ConfigError "file:line: field: message" for a
// field path of a document decoded by DecodeYAML; the line is that of the
// field, or of its nearest enclosing field when it is absent (0 when
// none is known).
func FieldError(file string, lines map[string]int, field, format string, a ...any) *ConfigError {
	line := 0
	for p := field; p != ""; {
		if l, ok := lines[p]; ok {
			line = l
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return &ConfigError{file, line, field, fmt.Sprintf(format, a...)}
}

// validate checks c; lines maps field paths to lines.
func (c *Config) validate(file string, lines map[string]int) error {
	at := func(field, format string, a ...any) error {
		return FieldError(file, lines, field, format, a...)
	}
	if len(c.Backends) == 0 {
		return at("backends", "at least one backend is required")
	}
	seen := map[string]int{}
	for i, b := range c.Backends {
		f := fmt.Sprintf("backends[%d]", i)
		switch {
		case b.Name == "":
			return at(f+".name", "missing")
		case !nameRE.MatchString(b.Name):
			return at(f+".name", "%q: use letters, digits, '.', '_' or '-'", b.Name)
		}
		if j, dup := seen[b.Name]; dup {
			return at(f+".name", "duplicate backend name %q (also backends[%d])", b.Name, j)
		}
		seen[b.Name] = i
		if !b.Engine.Valid() {
			names := make([]string, len(Engines))
			for k, e := range Engines {
				names[k] = string(e)
			}
			return at(f+".engine", "%q: want one of %s", b.Engine, strings.Join(names, ", "))
		}
		if err := checkURLs(b); err != nil {
			var fe *urlFieldError
			if errors.As(err, &fe) {
				return at(f+"."+fe.field, "%v", fe.err)
			}
			return at(f+".base_url", "%v", err)
		}
		if strings.TrimSpace(b.Model) == "" {
			return at(f+".model", "missing (the served model name, as listed by GET /v1/models)")
		}
		if b.APIKeyEnv != "" && !envRE.MatchString(b.APIKeyEnv) {
			return at(f+".api_key_env", "%q is not an environment variable name (the key itself never goes in the config)", b.APIKeyEnv)
		}
		switch {
		case b.MaxInFlight < 0 || b.MaxInFlight > MaxConfigCount:
			return at(f+".max_in_flight", "%d: want 0..%d (0 = default %d)", b.MaxInFlight, MaxConfigCount, DefaultMaxInFlight)
		case b.Timeout < 0 || b.Timeout > MaxConfigDuration:
			return at(f+".timeout", "%v: want 0..%v (0 = default %s)", b.Timeout, MaxConfigDuration, DefaultTimeout)
		case b.MaxRetries > MaxConfigRetries:
			return at(f+".max_retries", "%d: want at most %d (negative: no retries)", b.MaxRetries, MaxConfigRetries)
		case b.RetryBudget > MaxConfigDuration:
			return at(f+".retry_budget", "%v: want at most %v (negative: no budget)", b.RetryBudget, MaxConfigDuration)
		case b.MaxTopLogprobs < 0 || b.MaxTopLogprobs > MaxConfigCount:
			return at(f+".max_top_logprobs", "%d: want 0..%d", b.MaxTopLogprobs, MaxConfigCount)
		case b.MaxRetryWait < 0 || b.MaxRetryWait > MaxConfigDuration:
			return at(f+".max_retry_wait", "%v: want 0..%v", b.MaxRetryWait, MaxConfigDuration)
		case b.BreakerFailures > MaxConfigCount:
			return at(f+".breaker_failures", "%d: want at most %d (negative: no breaker)", b.BreakerFailures, MaxConfigCount)
		case b.BreakerCooldown < 0 || b.BreakerCooldown > MaxConfigDuration:
			return at(f+".breaker_cooldown", "%v: want 0..%v", b.BreakerCooldown, MaxConfigDuration)
		}
	}
	names := make([]string, 0, len(c.Roles))
	for k := range c.Roles {
		names = append(names, k)
	}
	slices.Sort(names) // report the first error deterministically
	for _, name := range names {
		r := c.Roles[name]
		f := "roles." + name
		if !nameRE.MatchString(name) {
			return at(f, "role name %q: use letters, digits, '.', '_' or '-'", name)
		}
		if r.Backend == "" {
			return at(f+".backend", "missing")
		}
		if _, ok := seen[r.Backend]; !ok {
			return at(f+".backend", "unknown backend %q", r.Backend)
		}
		s := r.Sampling
		switch {
		case s.Temperature != nil && (*s.Temperature < 0 || *s.Temperature > 2):
			return at(f+".sampling.temperature", "%g: want 0..2", *s.Temperature)
		case s.TopP != nil && (*s.TopP <= 0 || *s.TopP > 1):
			return at(f+".sampling.top_p", "%g: want (0, 1]", *s.TopP)
		case s.MaxTokens < 0 || s.MaxTokens > MaxConfigTokens:
			return at(f+".sampling.max_tokens", "%d: want 1..%d, or 0 for the engine default", s.MaxTokens, MaxConfigTokens)
		}
		if r.Variant != "" && !slices.Contains(PersuadeeVariants, r.Variant) {
			return at(f+".variant", "%q: want one of %s", r.Variant, strings.Join(PersuadeeVariants, ", "))
		}
		if r.Structured != "" && !slices.Contains(StructuredModes, r.Structured) {
			return at(f+".structured", "%q: want one of %s", r.Structured, strings.Join(StructuredModes, ", "))
		}
	}
	return nil
}

// urlFieldError is a URL problem in one field of a Backend ("base_url",
// "base_urls" or "base_urls[i]").
type urlFieldError struct {
	field string
	err   error
}

func (e *urlFieldError) Error() string { return e.field + ": " + e.err.Error() }
func (e *urlFieldError) Unwrap() error { return e.err }

// checkURLs checks b's URLs: BaseURL or a non-empty BaseURLs (not both),
// each accepted by checkURL and listed once. Errors are *urlFieldError.
func checkURLs(b Backend) error {
	switch {
	case b.BaseURLs == nil:
		if err := checkURL(b.BaseURL); err != nil {
			return &urlFieldError{"base_url", err}
		}
		return nil
	case b.BaseURL != "":
		return &urlFieldError{"base_urls", errors.New("give base_url (one URL) or base_urls (replicas), not both")}
	case len(b.BaseURLs) == 0:
		return &urlFieldError{"base_urls", errors.New("empty: list at least one URL, or use base_url")}
	}
	for i, u := range b.BaseURLs {
		f := fmt.Sprintf("base_urls[%d]", i)
		if err := checkURL(u); err != nil {
			return &urlFieldError{f, err}
		}
		for j, v := range b.BaseURLs[:i] {
			if strings.TrimRight(v, "/") == strings.TrimRight(u, "/") {
				return &urlFieldError{f, fmt.Errorf("%q is also base_urls[%d]", u, j)}
			}
		}
	}
	return nil
}

// checkURL accepts absolute http(s) URLs with a host and no credentials.
func checkURL(s string) error {
	if s == "" {
		return errors.New("missing (e.g. http://127.0.0.1:8000/v1)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http:// or https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", s)
	}
	if u.User != nil {
		return fmt.Errorf("credentials in the URL are not allowed: use api_key_env")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q: no query or fragment allowed", s)
	}
	return nil
}
