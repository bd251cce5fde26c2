package store

import (
	"context"

	"github.com/persuarena/persuarena/episode"
)

// Reader is what reading a run database takes: runs, their episodes
// (whole, streamed, paged, outcomes only, resume keys), per-pair counts
// and arms, step metrics and artifacts. The viewer, the report, the
// exporters and waiting on a queued run take only it. Errors are as
// documented on *DB (ErrNotFound for an unknown run).
type Reader interface {
	GetRun(ctx context.Context, id string) (Run, error)
	ListRuns(ctx context.Context) ([]RunSummary, error)

	DoneKeys(ctx context.Context, runID string) (map[episode.Key]bool, error)
	Episodes(ctx context.Context, runID string, filters ...Filter) ([]*episode.Episode, error)
	EachEpisode(ctx context.Context, runID string, fn func(*episode.Episode) error, filters ...Filter) error
	EachOutcome(ctx context.Context, runID string, fn func(episode.Outcome) error, filters ...Filter) error
	TerminalCounts(ctx context.Context, runID string) ([]PairCounts, error)
	EpisodePage(ctx context.Context, runID string, offset, limit int, filters ...Filter) (Page, error)
	Arms(ctx context.Context, runID string) ([]Arm, error)

	Metrics(ctx context.Context, runID string) ([]StepMetrics, error)
	Artifact(ctx context.Context, runID, name string) ([]byte, error)
}

// EpisodeSaver is what storing a run's finished episodes takes (the
// batching EpisodeWriter of NewWriter). Errors are as documented on *DB
// (ErrDuplicate for an episode key the run holds, ErrInvalid for an
// episode that cannot be stored).
type EpisodeSaver interface {
	SaveEpisode(ctx context.Context, runID string, ep *episode.Episode) error
	SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error
}

// RunWriter is a run's lifecycle and what it records beside episodes:
// create, set the status, stamp a running run's heartbeat, delete, drop failed episodes for a replay,
// step metrics and artifacts. Errors are as documented on *DB
// (ErrDuplicate for an existing run, ErrNotFound for an unknown one).
type RunWriter interface {
	CreateRun(ctx context.Context, r Run) error
	SetRunStatus(ctx context.Context, id, status string) error
	TouchRun(ctx context.Context, id string) error
	DeleteRun(ctx context.Context, id string) error
	DeleteFailed(ctx context.Context, runID string) (int, error)
	SaveMetrics(ctx context.Context, runID string, step int, metrics map[string]float64) error
	SaveArtifact(ctx context.Context, runID, name string, content []byte) error
}

// Store is the whole run database, what the run service (package runs),
// the trainers (train, selfplay) and the queue's workers use: Reader,
// EpisodeSaver and RunWriter. *DB implements it; tests and other back
// ends may provide their own.
type Store interface {
	Reader
	EpisodeSaver
	RunWriter
}

var (
	_ Store   = (*DB)(nil)
	_ Located = (*DB)(nil)
)
