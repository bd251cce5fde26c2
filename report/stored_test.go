package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"

	_ "github.com/persuarena/persuarena/reporeward" // registers repo:PACK sets with the run plan
)

// TestReportStreamedEqualsInMemory: report, which streams the runs'
// episodes (BuildStream over planArms and store.EachEpisode, the
// comparison from outcome rows), writes the same files byte for byte as
// the in-memory report (runReportInMemory, the code before streaming, kept
// as the reference): one run of two persuaders (paired comparison) and
// two runs combined (renamed persuaders, no comparison).
func TestReportStreamedEqualsInMemory(t *testing.T) {
	ctx := context.Background()
	db := handbuiltStore(t)
	for _, runs := range [][]string{{"r1"}, {"r1", "r2"}, {"r2", "nope"}} {
		dirA, dirB := t.TempDir(), t.TempDir()
		o := StoredOptions{Seed: 3, Resamples: 200, Title: "T"}
		o.Out = dirA
		errA := writeStoredAt(ctx, db, runs, o, io.Discard, io.Discard)
		o.Out = dirB
		errB := runReportInMemory(ctx, db, runs, o, io.Discard, io.Discard)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%v: err %v, want %v", runs, errA, errB)
		}
		if errA != nil {
			continue
		}
		names, _ := os.ReadDir(dirB)
		if len(names) < 5 {
			t.Fatalf("%v: %d files", runs, len(names))
		}
		for _, n := range names {
			a, _ := os.ReadFile(filepath.Join(dirA, n.Name()))
			b, _ := os.ReadFile(filepath.Join(dirB, n.Name()))
			if !bytes.Equal(a, b) {
				t.Errorf("%v: %s differs (%d vs %d bytes)", runs, n.Name(), len(a), len(b))
			}
		}
		html, _ := os.ReadFile(filepath.Join(dirA, "index.html"))
		// Every persuader is compared against the baseline, however many
		// the runs hold.
		if cmp := strings.Contains(string(html), "Paired comparison"); !cmp {
			t.Errorf("%v: paired comparison shown %v", runs, cmp)
		}
	}
}

func runReportInMemory(ctx context.Context, dbPath string, runIDs []string, o StoredOptions, out, errOut io.Writer) error {
	if o.Out == "" {
		return fmt.Errorf("--out is required")
	}
	if o.Resamples < 1 {
		return fmt.Errorf("--resamples must be >= 1, got %d", o.Resamples)
	}
	db, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var (
		runs  []analysis.RunEpisodes
		infos []RunInfo
	)
	meta := newRunMeta()
	for i, id := range runIDs {
		if slices.Contains(runIDs[:i], id) {
			return fmt.Errorf("run %s given twice", id)
		}
		fmt.Fprintf(errOut, "report: loading run %s\n", id)
		run, err := db.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		eps, err := analysis.LoadRun(ctx, db, id)
		if err != nil {
			return err
		}
		_, failed := analysis.Scored(eps)
		infos = append(infos, RunInfo{ID: run.ID, Kind: run.Kind, Status: run.Status, Version: run.Version,
			Seed: run.Seed, CreatedAt: run.CreatedAt, Config: run.Config, Episodes: len(eps), Failed: failed})
		runs = append(runs, analysis.RunEpisodes{RunID: id, Episodes: eps})
		if err := meta.add(ctx, db, run, errOut); err != nil {
			return err
		}
	}
	eps := analysis.Concat(runs)
	if len(eps) == 0 {
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	ro := o.buildOptions(infos, meta, errOut)
	r, err := Build(eps, ro)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "report: writing %s\n", o.Out)
	names, err := r.WriteDir(o.Out)
	if err != nil {
		return err
	}
	for _, s := range r.Skipped {
		fmt.Fprintln(errOut, "report: not shown:", s)
	}
	for _, n := range names {
		fmt.Fprintln(out, filepath.Join(o.Out, n))
	}
	return nil
}

// writeStoredAt is WriteStored over the database file dbPath.
func writeStoredAt(ctx context.Context, dbPath string, runIDs []string, o StoredOptions, out, errOut io.Writer) error {
	db, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	return WriteStored(ctx, db, runIDs, o, out, errOut)
}

// handbuiltStore saves analysis/testdata/handbuilt.jsonl (alpha and beta
// against sim on s1..s4, plus a failed beta episode on s5) as eval runs
// "r1" and "r2", persuaders configured in the order beta, alpha.
func handbuiltStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := `{"persuaders":["beta","alpha"],"persuadees":["sim"]}`
	for _, id := range []string{"r1", "r2"} {
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "eval", Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join("..", "analysis", "testdata", "handbuilt.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ep episode.Episode
			if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveEpisode(ctx, id, &ep); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	return path
}

// A run of a REPO scenario pack (eval --scenarios repo:negotiation) names
// its set as eval does, without a warning: runSets resolves set names
// through the run plan (issue 51: it called scenario.Resolve, warned
// "open repo:negotiation: no such file or directory" and labelled the set
// "unknown").
func TestRunSetsREPOPack(t *testing.T) {
	run := store.Run{ID: "r", Config: json.RawMessage(`{"scenarios":["repo:negotiation"],"split":"all"}`)}
	setOf := map[string]string{}
	var errOut bytes.Buffer
	names := runSets(context.Background(), run, setOf, &errOut)
	if errOut.Len() != 0 || len(names) != 1 || names[0] != "repo:negotiation" || len(setOf) == 0 {
		t.Fatalf("names %v, %d scenarios mapped, warnings %q", names, len(setOf), errOut.String())
	}
	for id, set := range setOf {
		if set != "repo:negotiation" {
			t.Errorf("scenario %s in set %q", id, set)
		}
	}
}
