package queue

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// oneWorker is the latest 1-worker throughput (episodes/s) of
// BenchmarkWorkers, the base of the others' scaling ratio.
var oneWorker float64

// firstStored is a worker's log that closes warm at its first stored
// episode.
type firstStored struct {
	once sync.Once
	warm chan struct{}
}

func (f *firstStored) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(" stored (")) {
		f.once.Do(func() { close(f.warm) })
	}
	return len(p), nil
}

// BenchmarkWorkers plays one queued run of b.N latency-bound episodes
// (persuader llm:p against persuadee llm:q on the fake engine, 50 ms per
// request) with 1, 2 and 4 workers of one episode at a time, against one
// PostgreSQL run database, and reports the steady-state throughput
// episodes/s: the episodes stored after every worker stored its first
// one, over the time since (a worker's first episode of a run includes
// resolving the run's roles and preflighting its backends, a cost per
// worker and run), and x-linear, that throughput over N × the latest
// 1-worker throughput of the same invocation (run the sub-benchmarks
// together, workers=1 runs first, e.g.
// -bench Workers -benchtime 48x; the scale-out issue asks for >= 0.85).
// ns/op is the whole wall time per episode, from the enqueued run to its
// last stored episode.
func BenchmarkWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			ctx := context.Background()
			db := storetest.PostgresURL(b)
			cfg, _ := fleet(b, 50*time.Millisecond)
			// At least two episodes per worker (testing's first b.N is 1).
			e := max(b.N, 2*n)
			scen, rollouts := min(e, 120), (e+119)/120
			spec := llmSpec(cfg, scenarioFile(b, scen), rollouts)
			total := scen * rollouts
			svc := runs.Open(db)
			defer svc.Close()
			wctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			var logs []*firstStored
			for range n {
				ready := make(chan struct{})
				log := &firstStored{warm: make(chan struct{})}
				logs = append(logs, log)
				wg.Go(func() {
					o := WorkerOptions{Workers: 1, PollInterval: 20 * time.Millisecond, Log: log, Ready: func() { close(ready) }}
					if err := Work(wctx, db, o); err != nil {
						b.Error(err)
					}
				})
				<-ready
			}
			defer func() { stop(); wg.Wait() }()
			b.StopTimer()
			res, queued, err := EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{})
			if err != nil || queued != total {
				b.Fatalf("enqueue: %d of %d, %v", queued, total, err)
			}
			b.StartTimer()
			for _, l := range logs {
				<-l.warm
			}
			start, warm := time.Now(), stored(b, svc.Store, res.RunID)
			for stored(b, svc.Store, res.RunID) < total {
				time.Sleep(10 * time.Millisecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			if run, err := Wait(ctx, svc.Store, res.RunID, nil); err != nil || run.Status != store.StatusDone {
				b.Fatalf("run %s, %v", run.Status, err)
			}
			thr := float64(total-warm) / elapsed.Seconds()
			if n == 1 {
				oneWorker = thr
			}
			b.ReportMetric(thr, "episodes/s")
			if oneWorker > 0 {
				b.ReportMetric(thr/(float64(n)*oneWorker), "x-linear")
			}
		})
	}
}
