package runs

import (
	"context"

	"github.com/persuarena/persuarena/store"
)

// ensureRead opens s.Path for reading only (store.OpenReadOnly) when s
// has no store yet: the commands that never write open a database in a
// read-only directory and never migrate it. Errors: store.OpenReadOnly's.
func (s *Service) ensureRead(ctx context.Context) error {
	if s.Store != nil {
		return nil
	}
	db, err := store.OpenReadOnly(ctx, s.Path)
	if err != nil {
		return err
	}
	s.db, s.Store = db, db
	return nil
}
