package runs

import (
	"context"
	"io"

	"github.com/persuarena/persuarena/view"
)

// View serves the read-only trajectory viewer (package view) over the
// existing run database on addr (host:port; view.DefaultAddr when empty)
// until ctx is cancelled, telling log where; allowHosts are the host
// names it answers besides loopback names and IP addresses
// (view.HostGuard). Errors: store.OpenReadOnly's
// and view.Serve's.
func (s *Service) View(ctx context.Context, addr string, log io.Writer, allowHosts ...string) error {
	if err := s.ensureRead(ctx); err != nil {
		return err
	}
	return view.Serve(ctx, s.Store, addr, s.DBPath(), log, allowHosts...)
}
