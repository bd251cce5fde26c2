package store

import (
	"context"
	"sync"
	"time"

	"github.com/persuarena/persuarena/episode"
)

// Default batching of an EpisodeWriter.
const (
	// DefaultWriterBatch is the number of buffered episodes that triggers
	// a write.
	DefaultWriterBatch = 256
	// DefaultWriterDelay bounds how long a finished episode waits in the
	// buffer before it is written.
	DefaultWriterDelay = 200 * time.Millisecond
)

// EpisodeWriter batches episodes of one run into SaveEpisodes calls: a
// batch is written when it holds Batch episodes or when its oldest episode
// has waited Delay, whichever comes first, and on Flush and Close. One
// transaction per batch instead of per episode is what lets storage keep up
// with the simulator (performance issue).
//
// An episode is durable only once its batch is written; OnSaved reports
// that, so progress shown to a user never runs ahead of the database. A
// process killed between Add and the write loses at most Delay of
// episodes, which a resume replays (they are not in DoneKeys).
//
// Add, Flush and Close are safe for concurrent use. A write error is
// returned by the Add, Flush or Close that meets it (a background write's
// error by the next call); the batch is kept so Flush can retry it.
type EpisodeWriter struct {
	db      Store
	runID   string
	batch   int
	delay   time.Duration
	onSaved func(n int)

	mu    sync.Mutex
	buf   []*episode.Episode
	timer *time.Timer
	err   error // a background write's error, returned once
	ctx   context.Context
}

// NewEpisodeWriter returns a writer for run runID. batch <= 0 means
// DefaultWriterBatch, delay <= 0 DefaultWriterDelay; onSaved (may be nil)
// is called with the number of episodes after each successful write.
func (db *DB) NewEpisodeWriter(runID string, batch int, delay time.Duration, onSaved func(n int)) *EpisodeWriter {
	return NewWriter(db, runID, batch, delay, onSaved)
}

// NewWriter is NewEpisodeWriter over any Store: a writer batching run
// runID's episodes into st.SaveEpisodes calls.
func NewWriter(st Store, runID string, batch int, delay time.Duration, onSaved func(n int)) *EpisodeWriter {
	if batch <= 0 {
		batch = DefaultWriterBatch
	}
	if delay <= 0 {
		delay = DefaultWriterDelay
	}
	return &EpisodeWriter{db: st, runID: runID, batch: batch, delay: delay, onSaved: onSaved}
}

// Add buffers ep and writes the batch when it is full. The episode must
// not be modified afterwards. Errors: a previous background write's error,
// or this write's (see SaveEpisodes).
func (w *EpisodeWriter) Add(ctx context.Context, ep *episode.Episode) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.takeErr(); err != nil {
		return err
	}
	w.buf = append(w.buf, ep)
	// Background writes must outlive a cancelled caller: a finished
	// episode is stored even after Ctrl-C.
	w.ctx = context.WithoutCancel(ctx)
	if len(w.buf) >= w.batch {
		return w.flushLocked(w.ctx)
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.delay, w.background)
	}
	return nil
}

// Flush writes whatever is buffered. Errors: as for Add.
func (w *EpisodeWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.takeErr(); err != nil {
		return err
	}
	return w.flushLocked(ctx)
}

// Close flushes and stops the delay timer; the writer must not be used
// afterwards. Errors: as for Flush.
func (w *EpisodeWriter) Close(ctx context.Context) error {
	return w.Flush(ctx)
}

func (w *EpisodeWriter) background() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.err == nil && len(w.buf) > 0 {
		w.err = w.flushLocked(w.ctx)
	}
}

func (w *EpisodeWriter) takeErr() error {
	err := w.err
	w.err = nil
	return err
}

func (w *EpisodeWriter) flushLocked(ctx context.Context) error {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.db.SaveEpisodes(ctx, w.runID, w.buf); err != nil {
		return err
	}
	n := len(w.buf)
	w.buf = w.buf[:0:0]
	if w.onSaved != nil {
		w.onSaved(n)
	}
	return nil
}
