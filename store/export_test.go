package store

// PostgresMigrations exposes the PostgreSQL schema history to the
// external tests.
var PostgresMigrations = func() []string { return pgMigrations }

// SampleEpisode exposes the hand-built episode to the external tests.
var SampleEpisode = sampleEpisode

// SQLiteMigrations exposes the SQLite schema history to the external
// tests.
var SQLiteMigrations = func() []string { return migrations }
