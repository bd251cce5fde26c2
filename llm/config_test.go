package llm

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadExampleConfig(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "persuarena.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Backends) != 2 || c.Backends[0].Engine != VLLM || c.Backends[1].APIKeyEnv != "OPENAI_API_KEY" {
		t.Fatalf("backends %+v", c.Backends)
	}
	if c.Backends[0].Timeout != 120*time.Second || c.Backends[1].BreakerCooldown != 30*time.Second {
		t.Fatalf("durations %+v", c.Backends)
	}
	r, b, err := c.Role("persuadee")
	if err != nil || b.Name != "qwen3-14b" || r.Thinking == nil || *r.Thinking || *r.Sampling.Temperature != 0.7 ||
		r.Sampling.MaxTokens != 512 || r.Sampling.Extra["top_k"] != uint64(20) {
		t.Fatalf("persuadee %+v %+v %v (extra %T)", r, b, err, r.Sampling.Extra["top_k"])
	}
	if _, b, err := c.Role("hosted"); err != nil || b.Engine != OpenAI {
		t.Fatalf("a backend name works as llm:NAME: %v", err)
	}
	if _, _, err := c.Role("nobody"); err == nil || !strings.Contains(err.Error(), "judge, persuadee, persuader") {
		t.Fatalf("unknown role: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	const head = "backends:\n  - name: a\n    base_url: http://h:1/v1\n    engine: vllm\n    model: m\n"
	cases := []struct{ name, yaml, want string }{
		{"literal key", head + "    api_key: sk-123\n", "c.yaml:6: backends[0].api_key: API keys are never stored"},
		{"unknown field", head + "    colour: red\n", `c.yaml:6: backends[0].colour: unknown field "colour"`},
		{"bad engine", strings.Replace(head, "vllm", "tgi", 1), `c.yaml:4: backends[0].engine: "tgi": want one of vllm, sglang, llamacpp, ollama, openai`},
		{"bad url", strings.Replace(head, "http://h:1/v1", "ftp://h/v1", 1), "c.yaml:3: backends[0].base_url:"},
		{"url credentials", strings.Replace(head, "http://h:1/v1", "http://u:secretpw@h/v1", 1), "c.yaml:3: backends[0].base_url: credentials in the URL"},
		{"no model", strings.Replace(head, "    model: m\n", "", 1), "c.yaml:2: backends[0].model: missing"},
		{"duplicate", head + "  - name: a\n    base_url: http://h:2/v1\n    engine: sglang\n    model: m\n", `c.yaml:6: backends[1].name: duplicate backend name "a"`},
		{"role backend", head + "roles:\n  judge:\n    backend: b\n", `c.yaml:8: roles.judge.backend: unknown backend "b"`},
		{"temperature", head + "roles:\n  judge:\n    backend: a\n    sampling:\n      temperature: 3\n", "c.yaml:10: roles.judge.sampling.temperature: 3: want 0..2"},
		{"max tokens", head + "roles:\n  judge:\n    backend: a\n    sampling:\n      max_tokens: -1\n", "c.yaml:10: roles.judge.sampling.max_tokens"},
		{"type", head + "    max_in_flight: lots\n", "c.yaml:6: backends[0].max_in_flight: cannot unmarshal"},
		// Numbers a typo makes huge are refused with their range.
		{"huge in flight", head + "    max_in_flight: 9223372036854775807\n", "c.yaml:6: backends[0].max_in_flight: 9223372036854775807: want 0..4096"},
		{"negative in flight", head + "    max_in_flight: -1\n", "c.yaml:6: backends[0].max_in_flight: -1: want 0..4096"},
		{"huge retries", head + "    max_retries: 2147483648\n", "c.yaml:6: backends[0].max_retries: 2147483648: want at most 100"},
		{"huge timeout", head + "    timeout: 1000h\n", "c.yaml:6: backends[0].timeout: 1000h0m0s: want 0..24h0m0s"},
		{"huge breaker", head + "    breaker_failures: 2147483648\n", "c.yaml:6: backends[0].breaker_failures: 2147483648: want at most 4096"},
		{"huge max tokens", head + "roles:\n  judge:\n    backend: a\n    sampling:\n      max_tokens: 9223372036854775807\n", "c.yaml:10: roles.judge.sampling.max_tokens: 9223372036854775807: want 1..1048576"},
		{"bad duration", head + "    timeout: soon\n", `c.yaml:6: backends[0].timeout: "soon": want a duration`},
		{"env name", head + "    api_key_env: sk-abc\n", `c.yaml:6: backends[0].api_key_env: "sk-abc" is not an environment variable name`},
		{"syntax", "backends: [\n", "c.yaml:"},
		{"no backends", "roles: {}\n", "c.yaml: backends: at least one backend"},
		{"variant", head + "roles:\n  user:\n    backend: a\n    variant: sneaky\n", `c.yaml:9: roles.user.variant: "sneaky": want one of default, soft, hard`},
	}
	for _, tc := range cases {
		_, err := ParseConfig("c.yaml", []byte(tc.yaml))
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want prefix %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: error echoes URL credentials: %v", tc.name, err)
		}
	}
}

// A persuadee role may name its conduct variant.
func TestRoleVariant(t *testing.T) {
	const y = "backends:\n  - name: a\n    base_url: http://h:1/v1\n    engine: vllm\n    model: m\nroles:\n  soft-user:\n    backend: a\n    variant: soft\n  user:\n    backend: a\n"
	c, err := ParseConfig("c.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := c.Role("soft-user"); r.Variant != "soft" {
		t.Errorf("soft-user variant %q", r.Variant)
	}
	if r, _, _ := c.Role("user"); r.Variant != "" {
		t.Errorf("user variant %q", r.Variant)
	}
}

func TestBackendDefaults(t *testing.T) {
	b := Backend{MaxRetries: -1}.WithDefaults()
	if b.MaxInFlight != 16 || b.Timeout != 120*time.Second || b.MaxRetries != -1 || b.MaxRetryWait != time.Minute ||
		b.BreakerFailures != 5 || b.BreakerCooldown != 30*time.Second {
		t.Fatalf("%+v", b)
	}
	if d := (Backend{}).WithDefaults(); d.MaxRetries != 10 || d.RetryBudget != 10*time.Second {
		t.Fatal("default retries")
	}
}
