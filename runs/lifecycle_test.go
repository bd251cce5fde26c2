package runs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// childEnv, when set to a database path, turns the test binary into a
// process that creates an eval run there, stamping it every 50 ms, prints
// its ID and blocks until it is killed (TestDeadRunToldFromLive).
const childEnv = "PERSUARENA_RUNS_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		svc := Open(path)
		svc.Heartbeat = 50 * time.Millisecond
		id, err := svc.Create(context.Background(), "eval", 1, map[string]string{"child": "yes"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(id)
		io.Copy(io.Discard, os.Stdin) // until killed (or the parent closes stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// panicky is a persuader whose third episode panics, as a bug would.
type panicky struct{ n int }

func (p *panicky) Name() string { return "panicky" }
func (p *panicky) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return p, nil
}
func (p *panicky) Say(ctx context.Context, tr []episode.Message) (episode.Utterance, error) {
	if len(tr) == 2 {
		var m map[string]int
		m["boom"]++ // assignment to entry in nil map
	}
	return episode.Utterance{Text: "Would you consider it?"}, nil
}

// A panic in an episode (a worker goroutine) does not kill the process
// with the run left running: the pool turns it into an error and the run
// is marked failed. Before, the panic ended the process and the run stayed
// "running" for ever.
func TestPanicMarksRunFailed(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	spec := EvalSpec{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{"arena"},
		Split: "heldout", Tmax: 4, Rollouts: 1, Seed: 5}, Basis: probe.Default, Workers: 2}
	plan, err := PrepareEval(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan.Persuaders = []episode.Persuader{&panicky{}}
	res, err := New(db).Eval(ctx, plan, EvalOptions{})
	var pe *parallel.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "assignment to entry in nil map") {
		t.Fatalf("eval: %v, want the panic as an error", err)
	}
	if run, err := db.GetRun(ctx, res.RunID); err != nil || run.Status != store.StatusFailed {
		t.Fatalf("run after the panic: %+v, %v (want failed)", run, err)
	}
}

// A job that returns early without finishing its run (an error between
// Create and Finish), or a panic that unwinds through the command that
// deferred Close, leaves the run failed, not running; a finished run is
// left as it is.
func TestCloseFailsUnfinishedRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	var ids [3]string
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		svc := Open(path)
		defer svc.Close()
		var err error
		for i := range ids {
			if ids[i], err = svc.Create(ctx, "eval", uint64(i), nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // distinct IDs
		}
		if err := svc.Finish(ctx, ids[2], nil); err != nil {
			t.Fatal(err)
		}
		panic("a bug in the job")
	}()
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, want := range []string{store.StatusFailed, store.StatusFailed, store.StatusDone} {
		if run, err := db.GetRun(ctx, ids[i]); err != nil || run.Status != want {
			t.Fatalf("run %d: %+v, %v, want %s", i, run, err, want)
		}
	}
}

// Another process tells a run whose process died (SIGKILL, or an out of
// memory abort: nothing of it runs to mark the run) from one that is
// still played: the live process stamps its run every Heartbeat, and a
// running run without a stamp for StaleAfter is shown dead.
func TestDeadRunToldFromLive(t *testing.T) {
	cidata.Slow(t, "starts a process")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	if db, err := store.Open(ctx, path); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	id, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	id = strings.TrimSpace(id)

	viewer := Open(path)
	viewer.StaleAfter = 500 * time.Millisecond
	defer viewer.Close()
	status := func() string {
		var buf bytes.Buffer
		if err := viewer.List(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.HasPrefix(line, id) {
				return line
			}
		}
		t.Fatalf("run %s not listed:\n%s", id, buf.String())
		return ""
	}
	// Live for three times StaleAfter: the child keeps stamping.
	for range 15 {
		time.Sleep(100 * time.Millisecond)
		if line := status(); !strings.Contains(line, " running ") || strings.Contains(line, "dead") {
			t.Fatalf("live run listed as %q", line)
		}
	}
	if err := cmd.Process.Kill(); err != nil { // as SIGKILL or an abort would
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(status(), "dead (no heartbeat for") {
		if time.Now().After(deadline) {
			t.Fatalf("killed run still listed as %q", status())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var buf bytes.Buffer
	if err := viewer.Show(ctx, id, &buf); err != nil || !strings.Contains(buf.String(), "; resume it)") {
		t.Fatalf("show: %v\n%s", err, buf.String())
	}
}
