package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// releaseBinary returns the binary to start: $PERSUARENA_STARTUP_BIN
// when set (to time another build, e.g. an older commit's, side by side),
// else the release binary (`go build -trimpath -ldflags "-s -w"`, as
// README's install line) built into dir; it skips b without a go command.
func releaseBinary(b *testing.B, dir string) string {
	if bin := os.Getenv("PERSUARENA_STARTUP_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "persuarena")
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goCmd, "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Skipf("cannot build the release binary: %v\n%s", err, out)
	}
	return bin
}

// firstEpisode starts `bin eval --db db` (the default eval: four built-in
// persuaders against sim on the held-out split of both built-in sets) and
// returns the time from starting the process to its log line "N episodes
// to play", written right before the first episode is played (after the
// sets are loaded, the roles resolved, the database opened and the run
// created); then it kills the process.
func firstEpisode(b *testing.B, bin, db string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "eval", "--db", db)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var took time.Duration
	var log []string
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), "already stored)") && strings.Contains(sc.Text(), " episodes to play (") {
			took = time.Since(start)
			break
		}
		log = append(log, sc.Text())
	}
	cmd.Process.Kill()
	cmd.Wait()
	if took == 0 {
		b.Fatalf("eval never reached its first episode; stderr:\n%s", strings.Join(log, "\n"))
	}
	return took
}

// BenchmarkStartupToFirstEpisode measures the start-up of a default
// `persuarena eval` with the release binary, from starting the process to
// its first episode (firstEpisode), in ms-to-first-episode: with a new
// database file each time (fresh-db: the schema is created) and with one
// database that already holds runs (existing-db). The performance issue's
// target is <= 50 ms.
func BenchmarkStartupToFirstEpisode(b *testing.B) {
	bin := releaseBinary(b, b.TempDir())
	for _, existing := range []bool{false, true} {
		name := "fresh-db"
		if existing {
			name = "existing-db"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			db := filepath.Join(dir, "run.db")
			if existing {
				firstEpisode(b, bin, db)
			}
			var total time.Duration
			i := 0
			for b.Loop() {
				if !existing {
					db = filepath.Join(dir, fmt.Sprintf("run%d.db", i))
				}
				total += firstEpisode(b, bin, db)
				i++
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(i), "ms-to-first-episode")
		})
	}
}
