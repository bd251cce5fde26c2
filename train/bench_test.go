package train

import (
	"context"
	"runtime"
	"testing"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// BenchmarkTrainStep measures training throughput against the simulator:
// one op is one default step (16 arena training scenarios x G = 4
// rollouts, 4 Adam updates) on 2 cores: the benchmark sets GOMAXPROCS to
// min(2, NumCPU) for its duration, whatever -cpu says (scripts/bench runs
// with -cpu 1), and plays rollouts with that many workers. It reports
// episodes/s, rollouts and updates included.
func BenchmarkTrainStep(b *testing.B) {
	procs := min(2, runtime.NumCPU())
	prev := runtime.GOMAXPROCS(procs)
	b.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	scs := arena(b, scenario.Train)
	cfg := DefaultConfig()
	cfg.MaxSteps = 1 << 30
	tr, err := New(cfg, Options{Scenarios: scs, Persuadee: sim.New(sim.DefaultConfig()), Workers: procs})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tr.Step(ctx); err != nil { // compile the graph outside the timer
		b.Fatal(err)
	}
	b.ResetTimer()
	eps := 0
	for b.Loop() {
		m, err := tr.Step(ctx)
		if err != nil {
			b.Fatal(err)
		}
		eps += m.Episodes
	}
	b.ReportMetric(float64(eps)/b.Elapsed().Seconds(), "episodes/s")
}
