package store

import (
	"strings"
	"testing"
)

// Every form a password takes in a database name is redacted; paths and
// password-free URLs read as given.
func TestRedactDB(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"runs.db", "runs.db"},
		{"/data/pass word.db", "/data/pass word.db"},
		{"postgres://u:S3cr3t@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db?password=S3cr3t", "postgres://u@h/db?password=xxxxx"},
		{"postgresql://u@h/db?sslmode=disable&PassWord=S3cr3t", "postgresql://u@h/db?PassWord=xxxxx&sslmode=disable"},
		{"postgres://u@h/db?sslpassword=S3cr3t&application_name=pa", "postgres://u@h/db?application_name=pa&sslpassword=xxxxx"},
		{"postgres://h/db?user=u&api_key=S3cr3t", "postgres://h/db?api_key=xxxxx&user=u"},
		{"postgres://u:p%40ss@h/db", "postgres://u:xxxxx@h/db"},
		{"host=h port=5432 password=S3cr3t dbname=db", "host=h port=5432 password=xxxxx dbname=db"},
		{"host=h password = 'S3 cr\\'et' dbname=db", "host=h password = xxxxx dbname=db"},
		{"postgres://u:S3cr3t@h/db\x7f", "postgres://(unparsable URL)"},
		{"postgres://h/db", "postgres://h/db"},
	} {
		if got := RedactDB(tc.in); got != tc.want {
			t.Errorf("RedactDB(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Shown(tc.in); got != tc.want {
			t.Errorf("Shown(%q) = %q", tc.in, got)
		}
	}
	msg := `store: open postgres://u:S3cr3t@h/db: failed (retry "postgres://u@h/db?password=S3cr3t"; or host=h password=S3cr3t)`
	if got := RedactText(msg); strings.Contains(got, "S3cr3t") || !strings.Contains(got, "postgres://u:xxxxx@h/db") {
		t.Errorf("RedactText: %s", got)
	}
}
