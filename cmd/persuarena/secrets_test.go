package main

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/store/storetest"
)

// plantedPassword is planted in every form a database name can carry a
// password in; it must appear in no output.
const plantedPassword = "Pl4nted-S3cret"

// A password in the userinfo, in the query string (password= and
// sslpassword=) or in keyword/value form appears in nothing runs list,
// view, eval, serve and worker print, on failure (an unreachable server)
// and, with PostgreSQL, on success (eval's view: hint, serve's banner).
func TestDatabasePasswordNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // a keyword/value string is a SQLite file name: keep it here
	forms := []string{
		"postgres://u:" + plantedPassword + "@127.0.0.1:1/db?sslmode=disable",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=" + plantedPassword,
		"postgresql://u@127.0.0.1:1/db?sslpassword=" + plantedPassword + "&sslmode=disable",
		"host=127.0.0.1 port=1 password=" + plantedPassword + " dbname=db",
	}
	check := func(what, out, errOut string, err error) {
		t.Helper()
		all := out + errOut
		if err != nil {
			all += err.Error()
		}
		if strings.Contains(all, plantedPassword) {
			t.Errorf("%s printed the password:\n%s", what, all)
		}
	}
	for _, db := range forms {
		out, errOut, err := execRoot(t, "runs", "list", "--db", db)
		check("runs list --db "+db, out, errOut, err)
		out, errOut, err = execRoot(t, "view", "--db", db, "--addr", "127.0.0.1:0")
		check("view --db "+db, out, errOut, err)
		if err == nil {
			t.Errorf("view --db %s: no error", db)
		}
		if strings.HasPrefix(db, "host=") {
			continue // eval and serve would create a SQLite file of that name
		}
		out, errOut, err = execEval(t, false, false, "--db", db, "--split", "heldout", "--tmax", "2", "--rollouts", "1")
		check("eval --db "+db, out, errOut, err)
		out, errOut, err = execRoot(t, "worker", "--db", db, "--workers", "1")
		check("worker --db "+db, out, errOut, err)
	}
	if os.Getenv("PERSUARENA_PG_URL") == "" && os.Getenv("CI") == "" {
		return
	}
	// Success paths: the password moved into the query string.
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	q := u.Query()
	q.Set("password", pw)
	u.User = url.User(u.User.Username())
	u.RawQuery = q.Encode()
	db := u.String()
	out, errOut, err := execEval(t, false, false, "--db", db, "--split", "heldout", "--tmax", "2", "--rollouts", "1")
	if err != nil || !strings.Contains(errOut, "view: persuarena view --db postgres://") {
		t.Fatalf("eval on PostgreSQL: %v\n%s", err, errOut)
	}
	if pw != "" && strings.Contains(out+errOut, "password="+pw) {
		t.Errorf("eval printed the password:\n%s", errOut)
	}
	if !strings.Contains(errOut, "password=xxxxx") {
		t.Errorf("eval's hint lacks the redacted password:\n%s", errOut)
	}
	out, errOut, err = execRoot(t, "runs", "list", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	if pw != "" && strings.Contains(out+errOut, "password="+pw) {
		t.Errorf("runs list printed the password")
	}
}
