package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// flood opens n connections to the loopback address addr (it refuses any
// other) and, with ask, sends one keep-alive GET /health on each and
// reads its answer; then the connections idle. It returns them with how
// many got a 200; every connection has a deadline of life (the flood
// stops by itself) and t.Cleanup closes them all.
func flood(t testing.TB, addr string, n int, ask bool, life time.Duration) (conns []net.Conn, ok int) {
	t.Helper()
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("flood: %s is not a loopback address", addr)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue // refused or backlog full: the server is holding on
		}
		c.SetDeadline(time.Now().Add(life))
		conns = append(conns, c)
		if !ask {
			continue
		}
		if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: flood\r\n\r\n"); err != nil {
			continue
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ok++
			}
		}
		c.SetDeadline(time.Now().Add(life))
	}
	return conns, ok
}

// closedByServer counts the connections the server has closed (a read
// ends with EOF or a reset within wait).
func closedByServer(conns []net.Conn, wait time.Duration) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(wait))
			_, err := c.Read(make([]byte, 1))
			if ne, ok := err.(net.Error); err != nil && !(ok && ne.Timeout()) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return n
}

// serveLoopback runs s.Serve on a loopback listener until the test ends.
func serveLoopback(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// freshClient is a client with its own connections.
func freshClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// A flood of idle keep-alive connections and of connections that send
// nothing cannot take the server's descriptors: it holds at most MaxConns
// plus HealthReserve, closes the rest, and a new client still gets GET
// /health and a reset answered.
func TestConnFloodHealthStaysAnswerable(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.MaxConns, cfg.HealthReserve = 40, 4
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLoopback(t, s)
	idle, ok := flood(t, addr, 200, true, 30*time.Second)
	if ok != 200 {
		t.Fatalf("flood: %d of 200 health checks answered", ok)
	}
	silent, _ := flood(t, addr, 100, false, 30*time.Second)
	if n := openConns(s); n > 44 {
		t.Fatalf("server holds %d connections, want <= 44", n)
	}
	c := freshClient()
	resp, err := c.Get("http://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health under flood: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Post("http://"+addr+"/reset", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reset under flood: %v %v", resp, err)
	}
	resp.Body.Close()
	all := append(idle, silent...)
	if closed := closedByServer(all, time.Second); closed < len(all)-44 {
		t.Fatalf("server closed %d of %d flood connections, want >= %d", closed, len(all), len(all)-44)
	}
}

// A reserved connection (over MaxConns, none evictable) may only ask GET
// /health.
func TestReservedConnHealthOnly(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.MaxConns, cfg.HealthReserve = 2, 2
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLoopback(t, s)
	// Two connections mid-request (a header sent, the body pending) fill
	// MaxConns and cannot be evicted.
	var busy []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{")
		busy = append(busy, c)
	}
	waitFor(t, func() bool { return openConns(s) == 2 })
	time.Sleep(50 * time.Millisecond) // let both reach StateActive
	c := freshClient()
	resp, err := c.Post("http://"+addr+"/reset", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Fatalf("reset on a reserved connection: %d, want 503", resp.StatusCode)
	}
	resp, err = c.Get("http://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health on a reserved connection: %v %v", resp, err)
	}
	resp.Body.Close()
}

// openConns is the number of connections s's limiter holds, or -1 before
// Serve (started in another goroutine) has made the limiter.
func openConns(s *Server) int {
	s.mu.Lock()
	l := s.lim
	s.mu.Unlock()
	if l == nil {
		return -1
	}
	return l.open()
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 5 s")
}

// A body trickled one byte at a time is cut after ReadTimeout and the
// connection closed; an idle keep-alive connection is closed after
// ConnIdleTimeout.
func TestSlowBodyAndIdleConnCut(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.ReadTimeout, cfg.ConnIdleTimeout = 300*time.Millisecond, 300*time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLoopback(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("slow body answered %d", resp.StatusCode)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("slow body held for 10 s")
	}
	_, err = io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("slow-body connection not closed")
	}

	idle, _ := flood(t, addr, 1, true, 10*time.Second)
	if n := closedByServer(idle, 5*time.Second); n != 1 {
		t.Fatal("idle keep-alive connection not closed")
	}
}

// ReadTimeout bounds the body only: a step that takes longer than it is
// not cut (the slow persuadee returns its context's error if it were).
func TestReadTimeoutSparesLongSteps(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.Env.Persuadee = slowPersuadee{&fake{}, 400 * time.Millisecond}
	cfg.ReadTimeout = 100 * time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLoopback(t, s)
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post("http://"+addr+"/reset", "application/json", strings.NewReader(`{"episode_id":"slow"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reset: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Post("http://"+addr+"/step", "application/json", strings.NewReader(`{"episode_id":"slow","action":{"message":"[slow] Hi."}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("slow step: %d %s", resp.StatusCode, b)
	}
}

// TestFloodFigure floods an external server at PERSUARENA_FLOOD_ADDR
// (loopback only) with PERSUARENA_FLOOD_N (default 5000) connections
// that ask GET /health once and idle, then logs whether a new client's
// /health is answered and how long it took: the drill behind
// docs/server.md's flood figures. Skipped without the variable.
func TestFloodFigure(t *testing.T) {
	addr := os.Getenv("PERSUARENA_FLOOD_ADDR")
	if addr == "" {
		t.Skip("PERSUARENA_FLOOD_ADDR not set")
	}
	n := 5000
	if v := os.Getenv("PERSUARENA_FLOOD_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	// 50 flooders at once, so that connections the server never answers
	// (their time-outs) do not serialise the drill.
	var mu sync.Mutex
	var wg sync.WaitGroup
	var conns []net.Conn
	ok := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, k := flood(t, addr, n/50, true, 60*time.Second)
			mu.Lock()
			conns, ok = append(conns, c...), ok+k
			mu.Unlock()
		}()
	}
	wg.Wait()
	t0 := time.Now()
	resp, err := freshClient().Get("http://" + addr + "/health")
	status := "error: " + fmt.Sprint(err)
	if err == nil {
		status = resp.Status
		resp.Body.Close()
	}
	lat := time.Since(t0)
	closed := closedByServer(conns, time.Second)
	t.Logf("flood %d connections: %d connected, %d health answered, %d closed by the server; new client's /health: %s in %v",
		n, len(conns), ok, closed, status, lat.Round(time.Millisecond))
}
