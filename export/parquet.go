package export

import (
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Row is one Parquet row: one persuader turn with its episode's fields
// repeated, so that a trainer can read turns without joins. Nullable
// columns are pointers (Parquet optional). Column names are the parquet
// tags.
type Row struct {
	// Identity, public scenario fields and group, repeated on every turn
	// of an episode (see Episode).
	RunID      string  `parquet:"run_id,dict"`
	Persuader  string  `parquet:"persuader,dict"`
	Persuadee  string  `parquet:"persuadee,dict"`
	ScenarioID string  `parquet:"scenario_id,dict"`
	Split      string  `parquet:"split,dict"`
	Family     string  `parquet:"family,dict"`
	Domain     string  `parquet:"domain,dict"`
	Rollout    int64   `parquet:"rollout"`
	Seed       uint64  `parquet:"seed"`
	Group      string  `parquet:"group,dict"`
	GroupSize  int64   `parquet:"group_size"`
	Dead       bool    `parquet:"dead"`
	Separated  bool    `parquet:"separated"`
	Lambda     float64 `parquet:"lambda"`
	// T is the persuader turn (1-based); NTurns the episode's turn count.
	T             int64  `parquet:"t"`
	NTurns        int64  `parquet:"n_turns"`
	PersuaderText string `parquet:"persuader_text"`
	PersuadeeText string `parquet:"persuadee_text"`
	Decision      string `parquet:"decision,dict"`
	// Acts is list<string>; Probes is list<struct<probe, p (optional)>>.
	Acts   []string `parquet:"acts,list"`
	Probes []Probe  `parquet:"probes,list"`
	Belief *float64 `parquet:"belief,optional"`
	Dense  *float64 `parquet:"dense,optional"`
	B0     *float64 `parquet:"b0,optional"`
	// Advantage is A_{i,t}; AOut and ADense its two terms (unscaled).
	Advantage float64  `parquet:"advantage"`
	AOut      float64  `parquet:"a_out"`
	ADense    float64  `parquet:"a_dense"`
	Terminal  string   `parquet:"terminal,dict"`
	RGoal     *float64 `parquet:"r_goal,optional"`
	ROut      *float64 `parquet:"r_out,optional"`
}

// Rows flattens eps to one Row per turn, in order. An episode without
// turns (one that failed before its first turn) has no rows; the JSONL
// export keeps it.
func Rows(eps []Episode) []Row {
	n := 0
	for i := range eps {
		n += len(eps[i].Turns)
	}
	rows := make([]Row, 0, n)
	for i := range eps {
		e := &eps[i]
		for _, t := range e.Turns {
			rows = append(rows, Row{
				RunID: e.RunID, Persuader: e.Persuader, Persuadee: e.Persuadee, ScenarioID: e.ScenarioID,
				Split: e.Split, Family: e.Family, Domain: e.Domain, Rollout: int64(e.Rollout), Seed: e.Seed,
				Group: e.Group, GroupSize: int64(e.GroupSize), Dead: e.Dead, Separated: e.Separated,
				Lambda: e.Lambda, T: int64(t.T), NTurns: int64(len(e.Turns)),
				PersuaderText: t.PersuaderText, PersuadeeText: t.PersuadeeText, Decision: t.Decision,
				Acts: t.Acts, Probes: t.Probes, Belief: t.Belief, Dense: t.Dense, B0: e.B0,
				Advantage: t.Advantage, AOut: t.AOut, ADense: t.ADense,
				Terminal: e.Terminal, RGoal: e.RGoal, ROut: e.ROut,
			})
		}
	}
	return rows
}

// WriteParquet writes Rows(eps) to w as one Parquet file (zstd
// compressed), with meta as the file's key/value metadata (written in
// sorted key order).
func WriteParquet(w io.Writer, eps []Episode, meta map[string]string) error {
	opts := []parquet.WriterOption{parquet.Compression(&zstd.Codec{})}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		opts = append(opts, parquet.KeyValueMetadata(k, meta[k]))
	}
	pw := parquet.NewGenericWriter[Row](w, opts...)
	if _, err := pw.Write(Rows(eps)); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}
