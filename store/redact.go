package store

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a password wherever RedactDB finds one.
const redacted = "xxxxx"

// passwordParams are the connection parameters, lower case, that carry a
// password in a libpq connection URL's query string or a keyword/value
// connection string (PostgreSQL docs, "Connection Strings": password,
// sslpassword), plus spellings other drivers accept.
var passwordParams = []string{"password", "sslpassword", "passwd", "pwd", "pass"}

// keywordPassword matches a keyword=value password in a connection
// string, the value bare or single-quoted (with \' escapes).
var keywordPassword = regexp.MustCompile(`(?i)\b(password|sslpassword|passwd|pwd)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&;]+)`)

// urlInText matches a URL with a scheme inside text.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// RedactDB returns a run database name (a SQLite path, a postgres:// URL
// or a keyword/value connection string such as "host=h password=S") as
// messages, logs and pages may show it: the userinfo password of a URL,
// every password-like query parameter (password, sslpassword, passwd,
// pwd, pass and the credential keys ConfigSecrets names, in any case) and
// every keyword=value password replaced by "xxxxx"; a URL that does not
// parse keeps only its scheme. Anything else is unchanged, so a plain
// path reads as given. Every command and the viewer print database names
// through it (Shown, DB.Path).
func RedactDB(db string) string {
	if i := strings.Index(db, "://"); i > 0 && !strings.ContainsAny(db[:i], "/\\ ") {
		db = redactURL(db)
	}
	return keywordPassword.ReplaceAllString(db, "${1}${2}"+redacted)
}

// RedactText returns s with every URL in it and every keyword=value
// password redacted as RedactDB does: for messages (a driver's error)
// that quote a database name among other words.
func RedactText(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, redactURL)
	return keywordPassword.ReplaceAllString(s, "${1}${2}"+redacted)
}

// redactURL returns u without its passwords (see RedactDB).
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		scheme, _, _ := strings.Cut(u, "://")
		return scheme + "://(unparsable URL)"
	}
	if _, has := p.User.Password(); has {
		p.User = url.UserPassword(p.User.Username(), redacted)
	}
	if p.RawQuery != "" {
		q := p.Query()
		changed := false
		for k := range q {
			if isPasswordParam(k) {
				q[k] = []string{redacted}
				changed = true
			}
		}
		if changed {
			p.RawQuery = q.Encode()
		}
	}
	return p.String()
}

// isPasswordParam reports whether a URL query key carries a credential.
func isPasswordParam(k string) bool {
	lk := strings.ToLower(k)
	for _, p := range passwordParams {
		if lk == p {
			return true
		}
	}
	return secretKey(k)
}
