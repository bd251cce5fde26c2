package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// workerEnv, when set, makes the test binary a `persuarena worker`
// process on the PostgreSQL URL it holds (TestMain); the kill test starts
// such processes.
const workerEnv = "PERSUARENA_QUEUE_TEST_WORKER"

func TestMain(m *testing.M) {
	if db := os.Getenv(workerEnv); db != "" {
		os.Exit(workerMain(db))
	}
	os.Exit(m.Run())
}

// workerMain runs Work as a worker process would, options from the
// environment, until SIGTERM or SIGKILL.
func workerMain(db string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, _ := strconv.Atoi(os.Getenv(workerEnv + "_N"))
	o := WorkerOptions{Workers: n, JobTimeout: 5 * time.Second, RescueAfter: 6 * time.Second,
		PollInterval: 50 * time.Millisecond, Log: os.Stderr}
	o.Ready = func() { fmt.Fprintln(os.Stderr, "worker ready") }
	if err := Work(ctx, db, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fleetReply scripts the LLM roles on the fake engine, deterministically
// from the prompt: the persuader asks; the persuadee continues and
// accepts once the transcript holds 2 or 3 persuader turns (by the
// scenario); probes read a Yes probability that depends on the prompt.
func fleetReply(r fakeengine.Request) fakeengine.Reply {
	h := fnv.New32a()
	h.Write([]byte(r.Prompt))
	v := h.Sum32()
	switch {
	case strings.Contains(r.Prompt, "A private question to yourself"):
		p := 0.1 + 0.8*float64(v%1000)/1000
		return fakeengine.Reply{FirstToken: map[string]float64{"Yes": p, "No": 1 - p}}
	case strings.Contains(r.Prompt, "Your goal: persuade them"):
		return fakeengine.Reply{Text: fmt.Sprintf("Would a small first step help (%d)? It is your choice.", v%7)}
	}
	need := 2 + strings.Count(r.Prompt, "a")%2
	if strings.Count(r.Prompt, "<|im_start|>user") >= need {
		return fakeengine.Reply{Text: "All right, I will.\nDECISION: accept"}
	}
	return fakeengine.Reply{Text: "I am not sure yet.\nDECISION: continue"}
}

// fleet starts the fake vLLM engine answering every request after
// latency and writes a persuarena.yaml naming it as backend "fake" with
// roles "q" (persuadee) and "p" (persuader); it returns the config path.
func fleet(t testing.TB, latency time.Duration) (string, *fakeengine.Server) {
	t.Helper()
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(fleetReply), fakeengine.WithLatency(latency))
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf(`backends:
  - name: fake
    base_url: %s
    engine: vllm
    model: %s
    max_in_flight: 64
roles:
  q:
    backend: fake
    sampling:
      temperature: 0.7
      max_tokens: 128
  p:
    backend: fake
    sampling:
      temperature: 0.9
      max_tokens: 128
`, srv.URL, srv.Model)
	path := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, srv
}

// scenarioFile writes the first n held-out p4g scenarios to a JSONL file.
func scenarioFile(t testing.TB, n int) string {
	t.Helper()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "scenarios.jsonl")
	if err := scenario.WriteFile(path, scenario.Filter(ss, scenario.Heldout)[:n]); err != nil {
		t.Fatal(err)
	}
	return path
}

// llmSpec is an eval of persuader llm:p against persuadee llm:q on
// scenarios with rollouts each.
func llmSpec(config, scenarios string, rollouts int) runs.EvalSpec {
	return runs.EvalSpec{Grid: runplan.Grid{Persuaders: []string{"llm:p"}, Persuadees: []string{"llm:q"}, Scenarios: []string{scenarios}, Split: "all", Tmax: 4, Rollouts: rollouts, Seed: 5}, Basis: probe.Default, Config: config, Workers: 4}
}

// canonical is a run's stored episodes as JSON, in the store's order,
// without what differs between two runs of the same spec and seed: the
// run ID and the measured latencies.
func canonical(t testing.TB, st store.Store, runID string) string {
	t.Helper()
	eps, err := st.Episodes(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		ep.RunID, ep.JudgeMS, ep.InitialProbeMS = "", 0, 0
		for k := range ep.Turns {
			tu := &ep.Turns[k]
			tu.PersuaderMS, tu.PersuadeeMS, tu.ProbeMS = 0, 0, 0
		}
	}
	b, err := json.Marshal(eps)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reference plays spec in one process (runs.Service.RunEval) into a
// SQLite file and returns its canonical episodes, its table (CSV) and its
// stored episodes.
func reference(t testing.TB, spec runs.EvalSpec) (string, string, []*episode.Episode) {
	t.Helper()
	svc := runs.Open(filepath.Join(t.TempDir(), "ref.db"))
	defer svc.Close()
	res, err := svc.RunEval(context.Background(), spec, runs.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := svc.Store.Episodes(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, svc.Store, res.RunID), table(t, res.Summaries), eps
}

func table(t testing.TB, s []eval.Summary) string {
	t.Helper()
	var b bytes.Buffer
	if err := eval.WriteCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// firstDiff shows where two canonical serialisations part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-150)
	return fmt.Sprintf("at byte %d:\n%s\n%s", i, a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}

// stored counts run id's stored episodes.
func stored(t testing.TB, st store.Store, id string) int {
	t.Helper()
	pcs, err := st.TerminalCounts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return store.Stored(pcs)
}

// matchesReference fails t unless run id is finished, its queue empty,
// and its stored episodes and table equal the single-process run's
// (reference).
func matchesReference(t testing.TB, q *Conn, svc *runs.Service, plan *runs.EvalPlan, id, refEps, refTable string) {
	t.Helper()
	ctx := context.Background()
	if p, err := q.Pending(ctx, id); err != nil || p != 0 {
		t.Fatalf("pending after the run: %d, %v", p, err)
	}
	if got := canonical(t, svc.Store, id); got != refEps {
		t.Fatalf("queued run's episodes differ from a single-process eval's %s", firstDiff(got, refEps))
	}
	fin, err := svc.FinishEval(ctx, plan, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := table(t, fin.Summaries); got != refTable {
		t.Fatalf("table:\n%s\nsingle process:\n%s", got, refTable)
	}
}

// enqueued queues spec's run in the PostgreSQL run database db (want:
// the number of episode jobs it must queue) and opens the queue; both
// close when t ends.
func enqueued(t testing.TB, db string, spec runs.EvalSpec, want int) (*runs.Service, *runs.EvalResult, *Conn) {
	t.Helper()
	ctx := context.Background()
	svc := runs.Open(db)
	t.Cleanup(func() { svc.Close() })
	res, queued, err := EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{})
	if err != nil || queued != want {
		t.Fatalf("enqueue: %d queued, %v; want %d", queued, err, want)
	}
	q, err := Open(ctx, db, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return svc, res, q
}

// workIn runs Work in this process on db with o until stop, which returns Work's
// error (each call the same; from the test's goroutine).
func workIn(db string, o WorkerOptions) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Work(ctx, db, o) }()
	var err error
	stopped := false
	return func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
}
