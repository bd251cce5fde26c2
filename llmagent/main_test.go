package llmagent

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

// serveEnv, when set to an engine profile (e.g. "vllm"), turns the test
// binary into a stand-alone fake engine: see TestMain. latencyEnv gives its
// added latency per request as a time.ParseDuration string (default 0).
const (
	serveEnv   = "PERSUARENA_FAKEENGINE_SERVE"
	latencyEnv = "PERSUARENA_FAKEENGINE_LATENCY"
)

// TestMain runs the tests as usual unless serveEnv is set; then the binary
// serves persuadeeHandler from fakeengine on 127.0.0.1 (an ephemeral port),
// writes its base URL (…/v1) as one line on stdout and serves until stdin
// reaches EOF, so it ends with the parent that started it
// (startFakeEngineProcess).
func TestMain(m *testing.M) {
	if eng := os.Getenv(serveEnv); eng != "" {
		os.Exit(serveFakeEngine(llm.Engine(eng), os.Getenv(latencyEnv)))
	}
	os.Exit(m.Run())
}

// serveFakeEngine is the child's side of startFakeEngineProcess; it returns
// the exit status.
func serveFakeEngine(eng llm.Engine, latency string) int {
	var d time.Duration
	if latency != "" {
		var err error
		if d, err = time.ParseDuration(latency); err != nil {
			fmt.Fprintf(os.Stderr, "%s=%q: %v\n", latencyEnv, latency, err)
			return 2
		}
	}
	srv := fakeengine.New(eng, fakeengine.WithHandler(persuadeeHandler), fakeengine.WithLatency(d))
	defer srv.Close()
	fmt.Println(srv.URL)
	io.Copy(io.Discard, os.Stdin) // until the parent closes stdin or dies
	return 0
}

// startFakeEngineProcess re-executes the test binary as a fake engine of
// profile eng with the given latency (persuadeeHandler, loopback only) and
// returns a backend pointing at it. The child is killed at cleanup; it also
// exits on its own when this process dies (stdin EOF).
func startFakeEngineProcess(tb testing.TB, eng llm.Engine, latency time.Duration) llm.Backend {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+string(eng), latencyEnv+"="+latency.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var url string
	select {
	case url = <-line:
	case <-time.After(30 * time.Second):
		tb.Fatal("fake engine process: no URL within 30 s")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		tb.Fatalf("fake engine process: want a loopback URL on stdout, got %q", url)
	}
	return llm.Backend{Name: "fake", BaseURL: url, Engine: eng, Model: "fake-model"}
}
