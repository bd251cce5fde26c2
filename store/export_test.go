package store

// PostgresMigrations exposes the PostgreSQL schema history to the
// external tests.
var PostgresMigrations = func() []string { return pgMigrations }

// SQLiteMigrations exposes the SQLite schema history to the external
// tests.
var SQLiteMigrations = func() []string { return migrations }
