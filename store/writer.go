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

// EpisodeWriter batches episodes of one run into SaveEpisodes calls,
// written by a goroutine of its own so that storing overlaps with play:
// a batch is handed to the writer when it holds Batch episodes or when its
// oldest episode has waited Delay, whichever comes first, and on Flush and
// Close. Episodes handed over while a write is under way are written
// together by the next one (one transaction), so the batch grows with the
// load instead of the queue. One transaction per batch instead of per
// episode is what lets storage keep up with the simulator.
//
// An episode is durable only once its batch is written; OnSaved reports
// that, so progress shown to a user never runs ahead of the database. A
// process killed between Add and the write loses at most Delay (plus one
// write) of episodes, which a resume replays (they are not in DoneKeys).
//
// Add is bounded: once MaxQueued episodes wait for the writer, Add waits
// for a write to finish (back-pressure, so memory stays bounded).
//
// Add, Flush and Close are safe for concurrent use. A write error is
// returned by the Add, Flush or Close that follows it; the failed batch
// (and whatever was handed over after it) is kept, unwritten, so Flush can
// retry it.
type EpisodeWriter struct {
	db      EpisodeSaver
	runID   string
	batch   int
	delay   time.Duration
	onSaved func(n int)

	// rs, when the store is a *DB, takes episodes encoded by Add (in the
	// caller's goroutine, off the writer's).
	rs      rowSaver
	scratch []byte

	mu   sync.Mutex
	cond sync.Cond // broadcast when a write ends
	// buf is the batch being filled, queue what was handed to the writer
	// and not yet written (the failed batch first after an error); with
	// rs, bufRows and queueRows are their encoded rows.
	buf, queue         []*episode.Episode
	bufRows, queueRows []episodeRow
	writing            bool // a writer goroutine is running
	closed             bool // Close was called: nothing is written after it
	timer              *time.Timer
	err                error // a write's error, returned once
	ctx                context.Context
}

// MaxQueued is how many batches of episodes may wait for the writer (the
// batch being written not counted) before Add waits.
const MaxQueued = 2

// NewEpisodeWriter returns a writer for run runID. batch <= 0 means
// DefaultWriterBatch, delay <= 0 DefaultWriterDelay; onSaved (may be nil)
// is called with the number of episodes after each successful write, from
// the writer's goroutine.
func (db *DB) NewEpisodeWriter(runID string, batch int, delay time.Duration, onSaved func(n int)) *EpisodeWriter {
	return NewWriter(db, runID, batch, delay, onSaved)
}

// NewWriter is NewEpisodeWriter over any EpisodeSaver: a writer batching run
// runID's episodes into st.SaveEpisodes calls.
func NewWriter(st EpisodeSaver, runID string, batch int, delay time.Duration, onSaved func(n int)) *EpisodeWriter {
	if batch <= 0 {
		batch = DefaultWriterBatch
	}
	if delay <= 0 {
		delay = DefaultWriterDelay
	}
	w := &EpisodeWriter{db: st, runID: runID, batch: batch, delay: delay, onSaved: onSaved, ctx: context.Background()}
	w.rs, _ = st.(rowSaver)
	w.cond.L = &w.mu
	return w
}

// rowSaver stores episodes encoded beforehand (*DB).
type rowSaver interface {
	saveRows(ctx context.Context, runID string, eps []*episode.Episode, rows []episodeRow) error
}

// Add buffers ep and hands the batch to the writer when it is full,
// waiting only while MaxQueued batches are already waiting. The episode
// must not be modified afterwards. Errors: a previous write's error (see
// SaveEpisodes); over a *DB, ErrInvalid for an episode SaveEpisode
// refuses, which is then not buffered.
func (w *EpisodeWriter) Add(ctx context.Context, ep *episode.Episode) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.takeErr(); err != nil {
		return err
	}
	if w.rs != nil {
		var row episodeRow
		var err error
		if w.scratch, err = row.encode(w.runID, ep, w.scratch[:0]); err != nil {
			return err
		}
		w.bufRows = append(w.bufRows, row)
	}
	w.buf = append(w.buf, ep)
	// Writes must outlive a cancelled caller: a finished episode is
	// stored even after Ctrl-C.
	w.ctx = context.WithoutCancel(ctx)
	if len(w.buf) >= w.batch {
		w.handOffLocked()
		for w.err == nil && !w.closed && len(w.queue) >= MaxQueued*w.batch {
			if !w.writing {
				// Another caller took the error that stopped the writer:
				// retry its batch, as Flush would.
				w.handOffLocked()
			}
			w.cond.Wait()
		}
		return nil
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.delay, w.background)
	}
	return nil
}

// Flush hands over whatever is buffered and waits until everything handed
// over is written. Errors: a previous write's error, else this one's.
func (w *EpisodeWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.takeErr(); err != nil {
		return err
	}
	w.ctx = context.WithoutCancel(ctx)
	w.handOffLocked()
	for w.writing {
		w.cond.Wait()
	}
	return w.takeErr()
}

// Close flushes and stops the delay timer; the writer must not be used
// afterwards, and writes nothing after Close returns: after an error,
// what was not written is dropped (onSaved never reported it; a resume
// replays it). Errors: as for Flush.
func (w *EpisodeWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true // a timer firing from now on hands nothing over
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.mu.Unlock()
	// Flush waits for the writer unless an error stopped it (then no
	// write runs).
	return w.Flush(ctx)
}

func (w *EpisodeWriter) background() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.err == nil && !w.closed {
		w.handOffLocked()
	}
}

func (w *EpisodeWriter) takeErr() error {
	err := w.err
	w.err = nil
	return err
}

// handOffLocked moves the buffer to the queue and starts the writer
// goroutine if none runs (and no error waits to be returned).
func (w *EpisodeWriter) handOffLocked() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.queue = append(w.queue, w.buf...)
	w.queueRows = append(w.queueRows, w.bufRows...)
	w.buf, w.bufRows = w.buf[:0], w.bufRows[:0]
	if len(w.queue) > 0 && !w.writing && w.err == nil {
		w.writing = true
		go w.drain()
	}
}

// drain writes the queue, all of it per transaction, until it is empty or
// a write fails (the batch then goes back to the head of the queue).
func (w *EpisodeWriter) drain() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) > 0 && w.err == nil {
		b, rows, ctx := w.queue, w.queueRows, w.ctx
		w.queue, w.queueRows = nil, nil
		w.mu.Unlock()
		var err error
		if w.rs != nil {
			err = w.rs.saveRows(ctx, w.runID, b, rows)
		} else {
			err = w.db.SaveEpisodes(ctx, w.runID, b)
		}
		if err == nil && w.onSaved != nil {
			w.onSaved(len(b))
		}
		w.mu.Lock()
		if err != nil {
			w.err = err
			w.queue = append(b, w.queue...)
			if w.rs != nil {
				w.queueRows = append(rows, w.queueRows...)
			}
		}
		w.cond.Broadcast()
	}
	w.writing = false
	w.cond.Broadcast()
}
