// Command abusedrill is the serve abuse drill, loopback only
// and bounded in time: it starts `persuarena serve` on 127.0.0.1 (a free
// port) with the shipped defaults, samples the server's resident memory
// (VmRSS of /proc/PID/status) idle, then while clients abuse it for -for,
// then after; it prints the figures and fails when the steady state (the
// median of the last half of the abuse samples) is over 1.5 times the idle
// RSS plus the sessions' own state (-session-kb per held slot, 900 KiB: a
// session stepped with 16 KiB messages; docs/server.md "Memory"), or when a client saw an unexpected answer, or when a slot
// leaked (after the abuse, 64 new clients must each reset).
//
//	go run ./scripts/abusedrill -bin ./persuarena [-for 60s]
//
// scripts/drill-serve-memory builds the binary and runs it. The abuse, by
// -clients goroutines (default 64, one per slot) in turn: WebSocket
// sessions that reset, step with messages near the 16 KiB limit and drop
// without a close frame; HTTP and MCP episodes that reset and step once
// and are left (the lock-out pattern); resets over capacity; oversized,
// malformed and wrongly typed bodies; bodies trickled byte by byte; idle
// keep-alive connections opened and left; GET /state and /metadata polls.
// Answers other than the documented ones (200, 400, 404, 409, 413, 415,
// 422, 503 with CAPACITY_REACHED, WebSocket closes 1008/1009/1013) count
// as unexpected.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

func main() {
	bin := flag.String("bin", "./persuarena", "the persuarena binary")
	dur := flag.Duration("for", 60*time.Second, "abuse duration (at most 5m)")
	clients := flag.Int("clients", 64, "abusing goroutines (1..1024)")
	sessionKB := flag.Float64("session-kb", 900, "memory allowed per held session slot, KiB: a session's own state with 16 KiB messages (docs/server.md, BenchmarkSessionMemory)")
	serveLog := flag.String("serve-log", "", "write serve's standard error to this file")
	flag.Parse()
	if *dur <= 0 || *dur > 5*time.Minute || *clients < 1 || *clients > 1024 {
		fmt.Fprintln(os.Stderr, "abusedrill: -for must be in (0, 5m], -clients in 1..1024")
		os.Exit(2)
	}
	if err := run(*bin, *dur, *clients, *sessionKB, *serveLog); err != nil {
		fmt.Fprintln(os.Stderr, "abusedrill:", err)
		os.Exit(1)
	}
}

var listening = regexp.MustCompile(`persuarena serve: (http://\S+) `)

func run(bin string, dur time.Duration, clients int, sessionKB float64, serveLog string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dur+3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	url := ""
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		return errors.New("serve did not start")
	}
	var logw io.Writer = io.Discard
	if serveLog != "" {
		f, err := os.Create(serveLog)
		if err != nil {
			return err
		}
		defer f.Close()
		logw = f
	}
	go io.Copy(logw, stderr)
	pid := cmd.Process.Pid

	time.Sleep(2 * time.Second)
	idle := median(samples(pid, 3*time.Second))
	d := &drill{url: url, host: strings.TrimPrefix(url, "http://")}
	actx, stop := context.WithTimeout(ctx, dur)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { d.abuse(actx, i) })
	}
	during := samples(pid, dur)
	stop()
	wg.Wait()
	steady := median(during[len(during)/2:])
	peak := slices.Max(during)

	// No slot leaked: once the quiet sessions are past the idle lease
	// (30 s), 64 new clients each reset (they take the slots).
	time.Sleep(31 * time.Second)
	after := median(samples(pid, 3*time.Second))
	served := 0
	for range 64 {
		if st, _ := d.post(context.Background(), "/reset", `{}`, "application/json"); st == 200 {
			served++
		}
	}
	target := 1.5*idle + 64*sessionKB/1024
	fmt.Printf("serve RSS: idle %.1f MB; under %d abusing clients for %v: peak %.1f MB, steady %.1f MB (%.2fx idle); after %.1f MB\n",
		idle, clients, dur, peak, steady, steady/idle, after)
	fmt.Printf("target: steady <= 1.5 x idle + 64 sessions x %.0f KiB = %.1f MB: %s\n", sessionKB, target, okStr(steady <= target))
	fmt.Printf("requests %d (WebSocket sessions %d, HTTP/MCP episodes %d, refused at capacity %d), unexpected answers %d\n",
		d.requests.Load(), d.wsSessions.Load(), d.episodes.Load(), d.capacity.Load(), d.unexpected.Load())
	for _, u := range d.firstUnexpected() {
		fmt.Println("  unexpected:", u)
	}
	fmt.Printf("slot leak check: %d of 64 new clients served after the abuse: %s\n", served, okStr(served == 64))
	if steady > target || d.unexpected.Load() > 0 || served != 64 {
		return errors.New("drill FAILED")
	}
	return nil
}

func okStr(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// samples reads pid's VmRSS (MB) every 250 ms for d.
func samples(pid int, d time.Duration) []float64 {
	var out []float64
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			break
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				out = append(out, kb/1024)
			}
		}
	}
	if len(out) == 0 {
		out = []float64{0}
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

type drill struct {
	url, host                                            string
	requests, wsSessions, episodes, capacity, unexpected atomic.Int64
	mu                                                   sync.Mutex
	notes                                                []string
}

func (d *drill) note(format string, a ...any) {
	d.unexpected.Add(1)
	d.mu.Lock()
	if len(d.notes) < 10 {
		d.notes = append(d.notes, fmt.Sprintf(format, a...))
	}
	d.mu.Unlock()
}

func (d *drill) firstUnexpected() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.notes)
}

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// post sends one POST and returns the status and body (status 0: the
// request itself failed, e.g. the drill ended).
func (d *drill) post(ctx context.Context, path, body, ctype string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, "POST", d.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", ctype)
	return d.do(req)
}

func (d *drill) get(ctx context.Context, path string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, "GET", d.url+path, nil)
	if err != nil {
		return 0, nil
	}
	return d.do(req)
}

func (d *drill) do(req *http.Request) (int, []byte) {
	d.requests.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == 503 {
		d.capacity.Add(1)
	}
	return resp.StatusCode, b
}

// expect counts an answer outside want as unexpected (a failed request
// after the drill's end is not).
func (d *drill) expect(ctx context.Context, what string, st int, body []byte, want ...int) {
	if st == 0 && ctx.Err() != nil || slices.Contains(want, st) {
		return
	}
	if st == 503 && bytes.Contains(body, []byte("CAPACITY_REACHED")) {
		return
	}
	d.note("%s: %d %.200s", what, st, body)
}

func episodeID(body []byte) string {
	var r struct {
		Observation struct {
			Metadata struct {
				EpisodeID string `json:"episode_id"`
			} `json:"metadata"`
		} `json:"observation"`
		Result struct {
			StructuredContent struct {
				Observation struct {
					Metadata struct {
						EpisodeID string `json:"episode_id"`
					} `json:"metadata"`
				} `json:"observation"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(body, &r)
	if r.Observation.Metadata.EpisodeID != "" {
		return r.Observation.Metadata.EpisodeID
	}
	return r.Result.StructuredContent.Observation.Metadata.EpisodeID
}

// abuse runs client i's abuse until ctx ends, cycling through the kinds.
func (d *drill) abuse(ctx context.Context, i int) {
	big := strings.Repeat("Please consider it. ", 800) // 16,000 bytes
	for k := i; ctx.Err() == nil; k++ {
		switch k % 8 {
		case 0, 1: // a WebSocket session: reset, steps near the limit, dropped
			d.wsSession(ctx, big, k%2 == 0)
		case 2: // the lock-out pattern: reset + one step, then left
			st, body := d.post(ctx, "/reset", `{}`, "application/json")
			d.expect(ctx, "reset", st, body, 200)
			if id := episodeID(body); id != "" {
				d.episodes.Add(1)
				st, body = d.post(ctx, "/step", fmt.Sprintf(`{"episode_id":%q,"action":{"message":%q}}`, id, big), "application/json")
				d.expect(ctx, "step", st, body, 200, 409)
				st, body = d.get(ctx, "/state?episode_id="+id)
				d.expect(ctx, "state", st, body, 200, 404)
			}
		case 3: // MCP reset then say, left
			st, body := d.post(ctx, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reset","arguments":{}}}`, "application/json")
			d.expect(ctx, "mcp reset", st, body, 200)
			if id := episodeID(body); id != "" {
				d.episodes.Add(1)
				st, body = d.post(ctx, "/mcp", fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"say","arguments":{"episode_id":%q,"message":"Hi."}}}`, id), "application/json")
				d.expect(ctx, "mcp say", st, body, 200)
			}
		case 4: // bad bodies: too big, malformed, wrong type, unknown fields
			st, body := d.post(ctx, "/step", `{"episode_id":"x","action":{"message":"`+strings.Repeat("x", 200_000)+`"}}`, "application/json")
			d.expect(ctx, "oversized", st, body, 413)
			st, body = d.post(ctx, "/reset", `{"seed":`, "application/json")
			d.expect(ctx, "malformed", st, body, 400, 422)
			st, body = d.post(ctx, "/reset", `{}`, "text/plain")
			d.expect(ctx, "text/plain", st, body, 415)
			st, body = d.post(ctx, "/reset", `{"colour":"red"}`, "application/json")
			d.expect(ctx, "unknown field", st, body, 400, 422)
		case 5: // a body trickled a byte every 100 ms, given up after 2 s
			d.trickle(ctx)
		case 6: // idle keep-alive connections opened and left (closed at the end)
			if c, err := net.Dial("tcp", d.host); err == nil {
				fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", d.host)
				go func() { <-ctx.Done(); c.Close() }()
			}
			time.Sleep(50 * time.Millisecond)
		case 7: // polls
			st, body := d.get(ctx, "/metadata")
			d.expect(ctx, "metadata", st, body, 200)
			st, body = d.get(ctx, "/state?episode_id=nope")
			d.expect(ctx, "state of nothing", st, body, 404)
		}
	}
}

// wsSession plays one WebSocket session; drop ends it without a close
// frame.
func (d *drill) wsSession(ctx context.Context, big string, drop bool) {
	d.requests.Add(1)
	c, _, err := websocket.Dial(ctx, "ws://"+d.host+"/ws", nil)
	if err != nil {
		if ctx.Err() == nil {
			d.note("ws dial: %v", err)
		}
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	call := func(msg string) (string, error) {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			return "", err
		}
		_, b, err := c.Read(ctx)
		return string(b), err
	}
	reply, err := call(`{"type":"reset"}`)
	if err != nil {
		if st := websocket.CloseStatus(err); ctx.Err() == nil && st != websocket.StatusTryAgainLater && st != websocket.StatusPolicyViolation {
			d.note("ws reset: %v", err)
		}
		return
	}
	if strings.Contains(reply, "CAPACITY_REACHED") {
		d.capacity.Add(1)
		return
	}
	d.wsSessions.Add(1)
	for range 3 {
		reply, err = call(fmt.Sprintf(`{"type":"step","data":{"message":%q}}`, big))
		if err != nil || strings.Contains(reply, `"done":true`) || strings.Contains(reply, `"type":"error"`) {
			break
		}
	}
	if !drop {
		c.Close(websocket.StatusNormalClosure, "")
	}
}

// trickle sends a reset whose body comes a byte every 100 ms, and gives
// up after 2 s.
func (d *drill) trickle(ctx context.Context) {
	c, err := net.Dial("tcp", d.host)
	if err != nil {
		return
	}
	defer c.Close()
	d.requests.Add(1)
	fmt.Fprintf(c, "POST /reset HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", d.host)
	for range 20 {
		if ctx.Err() != nil {
			return
		}
		c.Write([]byte(" "))
		time.Sleep(100 * time.Millisecond)
	}
}
