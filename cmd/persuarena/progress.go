package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows a bar on an interactive terminal and a line every 10 %
// otherwise (CI logs).
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	w     io.Writer
	label string
	total int
	mu    sync.Mutex
	n     int
	start time.Time
}

func newProgress(w io.Writer, total int, label string) *progress {
	pr := &progress{w: w, label: label, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok && isTerminal(f) && total > 0 {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))
		pr.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(label+" "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.AverageETA(decor.ET_STYLE_GO)),
		)
	}
	return pr
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Increment records one finished item.
func (pr *progress) Increment() { pr.Add(1) }

// Add records k finished items.
func (pr *progress) Add(k int) {
	if pr.bar != nil {
		pr.bar.IncrBy(k)
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	prev := pr.n
	pr.n += k
	if pr.total > 0 && (pr.n*10/pr.total != prev*10/pr.total || pr.n == pr.total) {
		fmt.Fprintf(pr.w, "%s: %d/%d (%.1fs)\n", pr.label, pr.n, pr.total, time.Since(pr.start).Seconds())
	}
}

// Wait finishes the display; an unfinished bar (interrupted run) is aborted.
func (pr *progress) Wait() {
	if pr.p == nil {
		return
	}
	if !pr.bar.Completed() {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
}
