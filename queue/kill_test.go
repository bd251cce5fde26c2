package queue

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// workerProc is a worker process (the test binary re-executed, TestMain)
// whose log lines are collected.
type workerProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	line chan string // every log line, for waiting on one
	eof  chan struct{}
}

func startWorker(t *testing.T, db string, workers int) *workerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"="+db, workerEnv+"_N="+strconv.Itoa(workers))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, line: make(chan string, 4096), eof: make(chan struct{})}
	go func() {
		defer close(w.eof)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			w.mu.Lock()
			w.log = append(w.log, sc.Text())
			w.mu.Unlock()
			select {
			case w.line <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	return w
}

// await returns the first log line (from now on) containing s, or fails
// after a minute.
func (w *workerProc) await(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l := <-w.line:
			if strings.Contains(l, s) {
				return l
			}
		case <-w.eof:
			t.Fatalf("worker exited before logging %q:\n%s", s, w.text())
		case <-deadline:
			t.Fatalf("worker did not log %q within a minute:\n%s", s, w.text())
		}
	}
}

func (w *workerProc) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.log, "\n")
}

var logKey = regexp.MustCompile(`episode (\S+) (playing|stored|already stored)`)

// inFlight returns the episode keys the worker started and did not store.
func (w *workerProc) inFlight() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	open := map[string]bool{}
	var order []string
	for _, l := range w.log {
		m := logKey.FindStringSubmatch(l)
		switch {
		case m == nil:
		case m[2] == "playing":
			if !open[m[1]] {
				order = append(order, m[1])
			}
			open[m[1]] = true
		default:
			open[m[1]] = false
		}
	}
	var out []string
	for _, k := range order {
		if open[k] {
			out = append(out, k)
		}
	}
	return out
}

// Three worker processes play a queued run against the fake engine with
// latency; one is killed with SIGKILL while it plays episodes. The
// episodes it was playing are replayed by the others once River rescues
// their jobs; every episode is stored exactly once, and the stored
// episodes and the table are byte-identical to a single-process eval of
// the same spec and seed.
func TestKillAWorker(t *testing.T) {
	cidata.Slow(t, "kills a worker process and waits for its episodes to be rescued")
	ctx := context.Background()
	db := storetest.PostgresURL(t)
	cfg, _ := fleet(t, 40*time.Millisecond)
	spec := llmSpec(cfg, scenarioFile(t, 10), 3)
	const n = 30
	refEps, refTable, _ := reference(t, spec)

	svc := runs.Open(db)
	defer svc.Close()
	res, queued, err := EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{})
	if err != nil || queued != n {
		t.Fatalf("enqueue: %d, %v; want %d", queued, err, n)
	}
	id := res.RunID
	var ws []*workerProc
	for range 3 {
		w := startWorker(t, db, 2)
		w.await(t, "worker ready")
		ws = append(ws, w)
	}
	victim := ws[0]
	victim.await(t, " stored (")
	victim.await(t, " playing (")
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.cmd.Wait()
	<-victim.eof
	lost := victim.inFlight()
	if len(lost) == 0 {
		t.Fatalf("the killed worker was playing nothing:\n%s", victim.text())
	}

	// The killed worker's episodes replay within a minute (RescueAfter 6 s).
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	run, err := Wait(wctx, svc.Store, id, nil)
	if err != nil || run.Status != store.StatusDone {
		t.Fatalf("run %s, %v (%d/%d stored)\n%s\n%s", run.Status, err, stored(t, svc.Store, id), n, ws[1].text(), ws[2].text())
	}
	if got := stored(t, svc.Store, id); got != n {
		t.Fatalf("%d episodes stored, want %d", got, n)
	}
	// The killed worker's episodes were replayed (a later attempt) and
	// completed; nothing is left in the queue.
	q, err := Open(ctx, db, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, k := range lost {
		key, err := episode.ParseKey(k)
		if err != nil {
			t.Fatal(err)
		}
		var state string
		var attempt int
		err = q.pool.QueryRow(ctx, `SELECT state, attempt FROM river_job WHERE args->>'run' = $1 AND args->>'scenario_id' = $2
			AND (args->>'rollout')::int = $3`, id, key.ScenarioID, key.Rollout).Scan(&state, &attempt)
		if err != nil || state != "completed" || attempt < 2 {
			t.Errorf("job of killed episode %s: %s, attempt %d, %v; want completed on attempt >= 2", k, state, attempt, err)
		}
	}
	matchesReference(t, q, svc, res.Plan, id, refEps, refTable)
	t.Logf("killed worker's episodes %v replayed", lost)
}
