package roles

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
)

// writeConfig writes a persuarena.yaml with one backend "fake" at url and
// roles "q" and "p" on it; retries are off so an unreachable backend fails
// at once.
func writeConfig(t *testing.T, url string) string {
	t.Helper()
	cfg := fmt.Sprintf(`backends:
  - name: fake
    base_url: %s
    engine: vllm
    model: fake-model
    max_retries: -1
roles:
  q:
    backend: fake
  p:
    backend: fake
`, url)
	path := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnknownAndDuplicateNames(t *testing.T) {
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Persuader("nobody"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "planner:CHECKPOINT") {
		t.Errorf("unknown persuader: %v", err)
	}
	if _, err := r.Persuadee("robot"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "sim:FILE") {
		t.Errorf("unknown persuadee: %v", err)
	}
	if _, err := r.Persuadees([]string{"sim", "sim"}); err == nil || !strings.Contains(err.Error(), `"sim" given twice`) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := r.Persuadee("llm:q"); err == nil || !strings.Contains(err.Error(), "needs --config") {
		t.Errorf("llm without config: %v", err)
	}
	pees, err := r.Persuadees([]string{"sim", "sim-soft", "sim-hard", "sim-hand"})
	if err != nil || len(pees) != 4 {
		t.Fatalf("sim kinds: %v", err)
	}
	pers, err := r.Persuaders([]string{"script", "pushy"})
	if err != nil || pers[0].Name() != "script" || pers[1].Name() != "pushy" {
		t.Fatalf("built-ins: %v", err)
	}
	if r.UsesLLM() || r.Preflight(context.Background()) != nil {
		t.Error("no LLM role resolved, yet UsesLLM or Preflight failed")
	}
}

func TestPlannerArmName(t *testing.T) {
	pol, err := planner.NewPolicy(planner.FeatureSpec{Version: planner.FeatureVersion, Tmax: 4}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lam05.json")
	if err := planner.Save(path, &planner.Checkpoint{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	r, _ := New("")
	p, err := r.Persuader("planner:" + path)
	if err != nil {
		t.Fatal(err)
	}
	want := "planner:lam05@" + (&planner.Checkpoint{Policy: pol}).Hash()
	if p.Name() != want || strings.Contains(p.Name(), "/") {
		t.Errorf("arm name %q, want %q", p.Name(), want)
	}
	if _, err := r.Persuader("planner:" + path + ".missing"); err == nil || !strings.Contains(err.Error(), "lam05.json.missing") {
		t.Errorf("missing checkpoint: %v", err)
	}
}

func TestLLMRolesAndPreflight(t *testing.T) {
	srv := fakeengine.New(llm.VLLM)
	t.Cleanup(srv.Close)
	r, err := New(writeConfig(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Persuader("llm:p")
	if err != nil || p.Name() != "llm:p" {
		t.Fatalf("llm persuader: %v", err)
	}
	us, err := r.MASPUsers([]string{"sim-hard", "llm:q"}, masp.DefaultSuccessRule)
	if err != nil {
		t.Fatal(err)
	}
	if us[0].Rationality == nil || us[1].Rationality != nil || us[1].Persuadee.Name() != "llm:q" {
		t.Errorf("MASP users: sim needs the rule judge, llm:q none: %+v", us)
	}
	info := r.LLM()
	if len(info) != 2 || info[0] != (LLMInfo{Ref: "llm:p", Backend: "fake", Engine: llm.VLLM, Model: "fake-model"}) || info[1].Ref != "llm:q" {
		t.Errorf("LLM info %+v", info)
	}
	if err := r.Preflight(context.Background()); err != nil {
		t.Errorf("preflight of a served backend: %v", err)
	}
	if _, err := r.Persuadee("llm:nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown role: %v", err)
	}
}

func TestPreflightUnreachable(t *testing.T) {
	dead := httptest.NewServer(nil)
	url := dead.URL + "/v1"
	dead.Close() // nothing listens there now
	r, err := New(writeConfig(t, url))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Persuadee("llm:q"); err != nil {
		t.Fatal(err)
	}
	err = r.Preflight(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), `backend "fake"`) {
		t.Errorf("preflight of an unreachable backend: %v", err)
	}
}

// A simulator persuadee takes a reader by name: +reader=llm:ROLE reads
// through the role (and fails without --config), +reader=embedded is the
// default reader, any other reader is unknown.
func TestSimReaders(t *testing.T) {
	srv := fakeengine.New(llm.VLLM)
	t.Cleanup(srv.Close)
	r, err := New(writeConfig(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Persuadee("sim-hard+reader=llm:q")
	if err != nil || p.Name() != "sim-hard+reader=llm:q" || !IsSim("sim-hard+reader=llm:q") {
		t.Fatalf("sim-hard+reader=llm:q: %v %v", p, err)
	}
	if got := r.LLM(); len(got) != 1 || got[0].Ref != "llm:q" {
		t.Errorf("LLM info %+v, want the reader's role", got)
	}
	if p, err := r.Persuadee("sim+reader=embedded"); err != nil || p.Name() != "sim+reader=embedded" {
		t.Errorf("sim+reader=embedded: %v %v", p, err)
	}
	if _, err := r.Persuadee("sim+reader=magic"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown reader: %v", err)
	}
	bare, _ := New("")
	if _, err := bare.Persuadee("sim+reader=llm:q"); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("llm reader without --config: %v", err)
	}
}
