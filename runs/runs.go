// Package runs is the run service: it creates, resumes and finishes the
// runs of the run database (package store, through its Store interface)
// for every job that stores one (eval, train, selfplay, masp eval, serve),
// and it plays and summarises eval runs (EvalSpec, Service.Eval).
//
// A run's status moves running → done, failed or interrupted (Finish
// maps the job's error: context.Canceled is interrupted). A run in which
// every episode failed is failed and its error (ErrAllFailed) carries the
// first episode's underlying failure. A run is never left running by a
// process that ends: Close marks the runs it has not finished failed (a
// fatal error, or a panic unwinding through the command), the worker pools
// turn panics into errors (parallel.PanicError), and while a process plays
// a run it stamps the run's UpdatedAt every Heartbeat, so that another
// process tells a run whose process died (killed, out of memory) from a
// live one (Stale).
package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/persuarena/persuarena/internal/buildinfo"
	"github.com/persuarena/persuarena/store"
)

// ErrAllFailed is wrapped by the error of a run in which every played
// episode failed; the message carries the first episode's failure.
var ErrAllFailed = errors.New("every episode failed")

// Service creates and updates runs in a Store.
type Service struct {
	// Store is the run database; when nil, the first job that needs it
	// opens the SQLite file Path (see Open).
	Store store.Store
	// Path is the run database file of a service made by Open ("" for one
	// made by New); messages name it (--db PATH).
	Path string
	// Version identifies the binary in created runs (default buildinfo.Version()).
	Version string
	// Now is the clock of run IDs and creation times (default time.Now).
	Now func() time.Time
	// Heartbeat is how often the runs this service plays are stamped
	// (store TouchRun); 0 means DefaultHeartbeat. StaleAfter is how long
	// a running run may go unstamped before Stale calls it dead; 0 means
	// DefaultStaleAfter.
	Heartbeat, StaleAfter time.Duration
	db                    *store.DB

	mu    sync.Mutex
	live  map[string]*heartbeat // the runs this service plays, by ID
	plays map[string]int        // Stamp's calls under way, by run ID
}

// Defaults of Service.Heartbeat and Service.StaleAfter.
//
// Choice: a stamp every 10 s costs one small write (none of an episode's),
// and a minute, six missed stamps, is long enough that a process busy
// with a slow store write or a paused machine is not called dead, and
// short enough that a user who finds a run "running" after a crash learns
// within a minute that nothing plays it.
const (
	DefaultHeartbeat  = 10 * time.Second
	DefaultStaleAfter = time.Minute
)

// heartbeat stamps one run until stopped; owned is set for a run this
// service created or resumed (Close fails it), clear for one it only
// stamps (Stamp).
type heartbeat struct {
	stop, done chan struct{}
	owned      bool
}

// track starts stamping run id (Heartbeat); s.Store is open.
func (s *Service) track(id string, owned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[string]*heartbeat{}
	}
	if hb := s.live[id]; hb != nil {
		hb.owned = hb.owned || owned
		return
	}
	hb := &heartbeat{stop: make(chan struct{}), done: make(chan struct{}), owned: owned}
	s.live[id] = hb
	st, every := s.Store, cmp.Or(s.Heartbeat, DefaultHeartbeat)
	go func() {
		defer close(hb.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-hb.stop:
				return
			case <-t.C:
				// A failed stamp is retried at the next tick; the run
				// looks dead only after StaleAfter without one.
				st.TouchRun(context.Background(), id)
			}
		}
	}()
}

// untrack stops stamping run id and waits until no stamp is under way;
// it reports whether the run was tracked as owned.
func (s *Service) untrack(id string) (owned bool) {
	s.mu.Lock()
	hb := s.live[id]
	delete(s.live, id)
	s.mu.Unlock()
	if hb == nil {
		return false
	}
	close(hb.stop)
	<-hb.done
	return hb.owned
}

// Stale reports whether run r is running with no process playing it: its
// last stamp (UpdatedAt) is older than StaleAfter at now; since is the
// time since that stamp. A run in another status is never stale.
func (s *Service) Stale(r store.Run, now time.Time) (stale bool, since time.Duration) {
	if r.Status != store.StatusRunning {
		return false, 0
	}
	since = now.Sub(r.UpdatedAt)
	return since > cmp.Or(s.StaleAfter, DefaultStaleAfter), since
}

// New returns a service over st with the build's version.
func New(st store.Store) *Service {
	return &Service{Store: st, Version: buildinfo.Version(), Now: time.Now}
}

// Open returns a service over the run database at path (a SQLite file,
// or a PostgreSQL database for a postgres:// URL, store.OpenURL), opened
// only when a job first needs it, after its inputs validated, so a
// rejected command creates no file. A job resuming a run needs an
// existing file (store.OpenExisting). Close closes what was opened.
func Open(path string) *Service {
	return &Service{Path: path, Version: buildinfo.Version(), Now: time.Now}
}

// Close marks every run this service created or resumed and has not
// finished failed (the job returned early on an error, or a panic unwinds
// through the command that deferred Close), then closes
// the database Open's service opened. Errors: the status writes' and the
// close's.
func (s *Service) Close() error {
	s.mu.Lock()
	ids := make([]string, 0, len(s.live))
	for id := range s.live {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	var errs []error
	for _, id := range ids {
		if s.untrack(id) {
			errs = append(errs, s.Store.SetRunStatus(context.Background(), id, store.StatusFailed))
		}
	}
	if s.db == nil {
		return errors.Join(errs...)
	}
	errs = append(errs, s.db.Close())
	s.db, s.Store = nil, nil
	return errors.Join(errs...)
}

// DBPath names the run database in messages: its file when the store
// has one (store.DB.Path), else Path (a URL without its password).
func (s *Service) DBPath() string {
	if p, ok := s.Store.(store.Located); ok {
		return p.Path()
	}
	return store.Shown(s.Path)
}

// ensure opens s.Path when s has no store yet; existing refuses to create
// a missing file. Errors: store.OpenURL's and store.OpenExisting's.
func (s *Service) ensure(ctx context.Context, existing bool) error {
	if s.Store != nil {
		return nil
	}
	open := store.OpenURL
	if existing {
		open = store.OpenExisting
	}
	db, err := open(ctx, s.Path)
	if err != nil {
		return err
	}
	s.db, s.Store = db, db
	return nil
}

// Create stores a new running run of kind kind (eval, train, selfplay,
// masp, serve) with seed and config (JSON-encoded; it must hold no
// secrets, store.ErrSecret otherwise) and returns its ID
// (store.NewRunID). Errors: the encoder's and Store.CreateRun's.
func (s *Service) Create(ctx context.Context, kind string, seed uint64, config any) (string, error) {
	if err := s.ensure(ctx, false); err != nil {
		return "", err
	}
	raw, err := json.Marshal(config)
	if err != nil {
		return "", fmt.Errorf("runs: %s config: %w", kind, err)
	}
	now := s.Now().UTC()
	id := store.NewRunID(now, seed)
	if err := s.Store.CreateRun(ctx, store.Run{ID: id, CreatedAt: now, Kind: kind, Seed: seed,
		Version: s.Version, Config: raw, Status: store.StatusRunning}); err != nil {
		return "", err
	}
	s.track(id, true)
	return id, nil
}

// Resume reads run id, decodes its stored configuration into config (may
// be nil) and marks it running again, stamped by this process until
// Finish or Close. Errors: store.ErrNotFound for an unknown run, a
// configuration that does not decode, or the status write.
func (s *Service) Resume(ctx context.Context, id string, config any) (store.Run, error) {
	if err := s.ensure(ctx, true); err != nil {
		return store.Run{}, fmt.Errorf("resume %s: %w", id, err)
	}
	run, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return store.Run{}, fmt.Errorf("resume %s: %w", id, err)
	}
	if config != nil {
		if err := json.Unmarshal(run.Config, config); err != nil {
			return store.Run{}, fmt.Errorf("resume %s: stored config: %w", id, err)
		}
	}
	return run, s.Running(ctx, id)
}

// Running marks run id running, stamped by this process (Heartbeat) until
// Finish or Close. Errors: the status write's.
func (s *Service) Running(ctx context.Context, id string) error {
	if err := s.Store.SetRunStatus(ctx, id, store.StatusRunning); err != nil {
		return err
	}
	s.track(id, true)
	return nil
}

// Release stops stamping run id without finishing it: the run is handed
// to other processes (the queue's workers), which finish it.
func (s *Service) Release(id string) { s.untrack(id) }

// Stamp stamps run id (Heartbeat) until every stop it returned has been
// called, without changing its status: a queue worker playing one of the
// run's episodes keeps the run alive for other processes (Stale).
func (s *Service) Stamp(id string) (stop func()) {
	s.mu.Lock()
	if s.plays == nil {
		s.plays = map[string]int{}
	}
	s.plays[id]++
	first := s.plays[id] == 1
	s.mu.Unlock()
	if first {
		s.track(id, false)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.plays[id]--
			last := s.plays[id] == 0
			if last {
				delete(s.plays, id)
			}
			s.mu.Unlock()
			if last {
				s.untrack(id)
			}
		})
	}
}

// Status is the run status a job's final error gives: done for nil,
// interrupted for context.Canceled, failed otherwise.
func Status(err error) string {
	switch {
	case err == nil:
		return store.StatusDone
	case errors.Is(err, context.Canceled):
		return store.StatusInterrupted
	}
	return store.StatusFailed
}

// Finish records the job's outcome on run id (Status(jobErr)), with a
// context Ctrl-C does not cancel, and returns jobErr joined with any
// status-write error. An empty id (a job without a run) does nothing.
func (s *Service) Finish(ctx context.Context, id string, jobErr error) error {
	if id == "" || s == nil || s.Store == nil {
		return jobErr
	}
	s.untrack(id) // no stamp after the final status
	return errors.Join(jobErr, s.Store.SetRunStatus(context.WithoutCancel(ctx), id, Status(jobErr)))
}
