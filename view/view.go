package view

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"
)

// DefaultAddr is persuarena view's listen address: loopback only.
const DefaultAddr = "127.0.0.1:8080"

//go:embed assets
var assets embed.FS

// RunURL returns the address of run runID's page on a viewer listening on
// addr (host:port), e.g. "http://127.0.0.1:8080/runs/ID".
func RunURL(addr, runID string) string {
	return "http://" + addr + "/runs/" + url.PathEscape(runID)
}

// EpisodeURL returns the address of one episode's page (key k of run
// runID) on a viewer listening on addr, e.g.
// "http://127.0.0.1:8080/runs/ID/episode?k=script%2Fsim%2Fs1%230".
func EpisodeURL(addr, runID string, k episode.Key) string {
	return "http://" + addr + episodeURL(runID, k)
}

// Hint is the line persuarena eval prints after a run: how to open run
// runID of the database dbPath in the viewer at DefaultAddr.
func Hint(dbPath, runID string) string {
	return fmt.Sprintf("view: persuarena view --db %s, then open %s", store.RedactDB(dbPath), RunURL(DefaultAddr, runID))
}

// Server is the viewer's http.Handler over a run database. It only reads
// the store. Safe for concurrent use.
type Server struct {
	st     store.Reader
	dbPath string
	mux    *http.ServeMux
	pages  map[string]*template.Template

	mu   sync.Mutex
	sets map[string]*runSets // run id -> its scenario sets, loaded once
}

// New returns the viewer over st; dbPath names the database in page
// headers (may be ""). Errors: none at run time — the embedded templates
// are checked by the tests — so New panics only on a broken build.
func New(st store.Reader, dbPath string) *Server {
	s := &Server{st: st, dbPath: store.RedactDB(dbPath), mux: http.NewServeMux(), sets: map[string]*runSets{}}
	s.pages = parsePages()
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		panic(err)
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.handleRuns)
	s.mux.Handle("GET /runs", http.RedirectHandler("/", http.StatusMovedPermanently)) // the run list is the home page
	s.mux.Handle("GET /runs/{$}", http.RedirectHandler("/", http.StatusMovedPermanently))
	s.mux.HandleFunc("GET /runs/{id}", s.handleRun)
	s.mux.HandleFunc("GET /runs/{id}/episode", s.handleEpisode)
	s.mux.HandleFunc("GET /compare", s.handleCompare)
	s.mux.HandleFunc("GET /compare/episode", s.handleCompareEpisode)
	return s
}

// ServeHTTP serves the pages; every method but GET (and HEAD) is 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w.Header())
	s.mux.ServeHTTP(w, r)
}

// Serve listens on addr (host:port; DefaultAddr when empty), tells log
// the address and serves New(st, dbPath) behind HostGuard(allowHosts)
// until ctx is cancelled, then
// shuts down within five seconds. An address off loopback gets a warning
// on log: the pages show hidden profiles and transcripts. Errors: the
// listener's (e.g. the port is taken).
func Serve(ctx context.Context, st store.Reader, addr, dbPath string, log io.Writer, allowHosts ...string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("view: listen on %s: %w", addr, err)
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			fmt.Fprintf(log, "warning: %s is not loopback; the viewer shows transcripts and hidden profiles to anyone who can reach it\n", addr)
		}
	}
	fmt.Fprintf(log, "view: serving %s on http://%s/ (Ctrl-C stops)\n", store.RedactDB(dbPath), ln.Addr())
	srv := &http.Server{Handler: HostGuard(New(st, dbPath), allowHosts), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("view: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}
