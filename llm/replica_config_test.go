package llm

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReplicaConfig(t *testing.T) {
	const head = "backends:\n  - name: a\n    engine: vllm\n    model: m\n"
	c, err := ParseConfig("c.yaml", []byte(head+"    base_urls: [http://h:1/v1, http://h:2/v1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Backends[0].URLs(); !slices.Equal(got, []string{"http://h:1/v1", "http://h:2/v1"}) {
		t.Fatalf("URLs %v", got)
	}
	if got := (Backend{BaseURL: "http://h:1/v1"}).URLs(); !slices.Equal(got, []string{"http://h:1/v1"}) {
		t.Fatalf("one-replica URLs %v", got)
	}
	cases := []struct{ name, yaml, want string }{
		{"both", head + "    base_url: http://h:1/v1\n    base_urls: [http://h:2/v1]\n", "c.yaml:6: backends[0].base_urls: give base_url (one URL) or base_urls (replicas), not both"},
		{"empty", head + "    base_urls: []\n", "c.yaml:5: backends[0].base_urls: empty"},
		{"bad item", head + "    base_urls:\n      - http://h:1/v1\n      - ftp://h:2/v1\n", `c.yaml:7: backends[0].base_urls[1]: "ftp://h:2/v1": want an http:// or https:// URL`},
		{"duplicate", head + "    base_urls:\n      - http://h:1/v1\n      - http://h:1/v1/\n", `c.yaml:7: backends[0].base_urls[1]: "http://h:1/v1/" is also base_urls[0]`},
		{"neither", head, "c.yaml:2: backends[0].base_url: missing"},
	}
	for _, tc := range cases {
		_, err := ParseConfig("c.yaml", []byte(tc.yaml))
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want prefix %q", tc.name, err, tc.want)
		}
	}
	// NewClient checks the same rule.
	_, err = NewClient(Backend{Name: "a", Engine: VLLM, Model: "m", BaseURL: "http://h:1/v1", BaseURLs: []string{"http://h:2/v1"}})
	if err == nil || !strings.Contains(err.Error(), `backend "a": base_urls: give base_url`) {
		t.Errorf("NewClient both: %v", err)
	}
}
