// Package progress shows how far a long command has got: a bar on an
// interactive terminal (mpb), and a line every 10 % otherwise, so CI logs
// stay short. The CLI's eval and masp eval use it.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Bar is one progress display of total items. Add may be called from
// several goroutines.
type Bar struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	w     io.Writer
	label string
	total int
	mu    sync.Mutex
	n     int
	start time.Time
}

// New starts a display of total items labelled label on w: a bar when w
// is a terminal and total > 0, else a line "label: n/total (secs)" at
// every tenth.
func New(w io.Writer, total int, label string) *Bar {
	pr := &Bar{w: w, label: label, total: total, start: time.Now()}
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
func (pr *Bar) Increment() { pr.Add(1) }

// Add records k finished items.
func (pr *Bar) Add(k int) {
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
func (pr *Bar) Wait() {
	if pr.p == nil {
		return
	}
	if !pr.bar.Completed() {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
}
