// Package runs is the run service: it creates, resumes and finishes the
// runs of the run database (package store, through its Store interface)
// for every job that stores one (eval, train, selfplay, masp eval, serve),
// and it plays and summarises eval runs (EvalSpec, Service.Eval).
//
// A run's status moves running → done, failed or interrupted (Finish
// maps the job's error: context.Canceled is interrupted). A run in which
// every episode failed is failed and its error (ErrAllFailed) carries the
// first episode's underlying failure.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	db  *store.DB
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

// Close closes the database Open's service opened (nil when none was).
func (s *Service) Close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db, s.Store = nil, nil
	return err
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
	return id, nil
}

// Resume reads run id, decodes its stored configuration into config (may
// be nil) and marks it running again. Errors: store.ErrNotFound for an
// unknown run, a configuration that does not decode, or the status write.
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
	return run, s.Store.SetRunStatus(ctx, id, store.StatusRunning)
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
	return errors.Join(jobErr, s.Store.SetRunStatus(context.WithoutCancel(ctx), id, Status(jobErr)))
}
