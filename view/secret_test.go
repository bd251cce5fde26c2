package view

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A password in the database name appears in no page header, in the
// start-up line or in eval's hint.
func TestDatabasePasswordNotRendered(t *testing.T) {
	_, db, _ := newFixture(t)
	for _, name := range []string{
		"postgres://u@127.0.0.1/db?password=Pl4nted-S3cret",
		"postgres://u:Pl4nted-S3cret@127.0.0.1/db",
		"host=h password=Pl4nted-S3cret dbname=db",
	} {
		h := New(db, name)
		for _, path := range []string{"/", "/runs/" + runA, "/compare?a=" + runA + "&b=" + runB} {
			status, body := get(t, h, path)
			if status != 200 || strings.Contains(body, "Pl4nted-S3cret") || !strings.Contains(body, "xxxxx") {
				t.Errorf("%s with --db %s: status %d, password shown or no redacted name", path, name, status)
			}
		}
		if strings.Contains(Hint(name, runA), "Pl4nted-S3cret") {
			t.Errorf("Hint shows the password: %s", Hint(name, runA))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		var log bytes.Buffer
		Serve(ctx, db, "127.0.0.1:0", name, &log)
		cancel()
		if strings.Contains(log.String(), "Pl4nted-S3cret") || !strings.Contains(log.String(), "view: serving") {
			t.Errorf("start-up line: %s", log.String())
		}
	}
}
