package store

import (
	"context"

	"github.com/persuarena/persuarena/episode"
)

// Store is what the run service (package runs), the trainers (train,
// selfplay) and the exporters need of a run database: runs (create, get,
// list, status, delete), episodes (save, stream, resume keys, failed
// replays), per-pair counts and arms, per-step metrics and named artifacts. *DB implements it; tests
// and other back ends may provide their own. Every method's errors are as
// documented on *DB (ErrNotFound for an unknown run, ErrDuplicate for an
// existing run or episode key, ErrInvalid for bad input).
type Store interface {
	CreateRun(ctx context.Context, r Run) error
	GetRun(ctx context.Context, id string) (Run, error)
	ListRuns(ctx context.Context) ([]RunSummary, error)
	SetRunStatus(ctx context.Context, id, status string) error
	DeleteRun(ctx context.Context, id string) error

	SaveEpisode(ctx context.Context, runID string, ep *episode.Episode) error
	SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error
	DoneKeys(ctx context.Context, runID string) (map[episode.Key]bool, error)
	DeleteFailed(ctx context.Context, runID string) (int, error)
	Episodes(ctx context.Context, runID string, filters ...Filter) ([]*episode.Episode, error)
	EachEpisode(ctx context.Context, runID string, fn func(*episode.Episode) error, filters ...Filter) error
	EachOutcome(ctx context.Context, runID string, fn func(episode.Outcome) error, filters ...Filter) error
	TerminalCounts(ctx context.Context, runID string) ([]PairCounts, error)
	EpisodePage(ctx context.Context, runID string, offset, limit int, filters ...Filter) (Page, error)
	Arms(ctx context.Context, runID string) ([]Arm, error)

	SaveMetrics(ctx context.Context, runID string, step int, metrics map[string]float64) error
	Metrics(ctx context.Context, runID string) ([]StepMetrics, error)

	SaveArtifact(ctx context.Context, runID, name string, content []byte) error
	Artifact(ctx context.Context, runID, name string) ([]byte, error)
}

var _ Store = (*DB)(nil)
