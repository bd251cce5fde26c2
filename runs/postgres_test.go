package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store/storetest"
)

// A --db postgres:// URL opens the PostgreSQL store through Open, and an
// evaluation stored there reads back the same table and episodes as one
// stored in a SQLite file with the same seed.
func TestEvalOnPostgresMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	spec := EvalSpec{Grid: runplan.Grid{Persuaders: []string{"script", "pushy"}, Persuadees: []string{"sim"}, Scenarios: []string{"p4g"}, Split: "heldout", Tmax: 6, Rollouts: 1, Seed: 11}, Basis: probe.Default, Workers: 2}
	var tables, episodes [2]string
	for i, db := range []string{filepath.Join(t.TempDir(), "r.db"), storetest.PostgresURL(t)} {
		plan, err := PrepareEval(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		svc := Open(db)
		res, err := svc.Eval(ctx, plan, EvalOptions{})
		if err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		var b bytes.Buffer
		if err := eval.WriteCSV(&b, res.Summaries); err != nil {
			t.Fatal(err)
		}
		tables[i] = b.String()
		eps, err := svc.Store.Episodes(ctx, res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps { // the run ID and measured latencies differ
			ep.RunID, ep.JudgeMS, ep.InitialProbeMS = "", 0, 0
			for k := range ep.Turns {
				ep.Turns[k].PersuaderMS, ep.Turns[k].PersuadeeMS, ep.Turns[k].ProbeMS = 0, 0, 0
			}
		}
		j, err := json.Marshal(eps)
		if err != nil {
			t.Fatal(err)
		}
		episodes[i] = string(j)
		if len(eps) != res.Missing || res.Missing != 240 {
			t.Fatalf("%s: %d episodes stored, %d played, want 240", db, len(eps), res.Missing)
		}
		if err := svc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if tables[0] != tables[1] {
		t.Fatalf("tables differ:\nSQLite\n%s\nPostgreSQL\n%s", tables[0], tables[1])
	}
	if episodes[0] != episodes[1] {
		a, b := episodes[0], episodes[1]
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		lo := max(0, i-200)
		t.Fatalf("stored episodes differ between SQLite and PostgreSQL at byte %d:\nSQLite     %s\nPostgreSQL %s",
			i, a[lo:min(len(a), i+100)], b[lo:min(len(b), i+100)])
	}
}
