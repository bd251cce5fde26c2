package store

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// secretSuffixes are normalised key endings (lower case, without '_', '-',
// '.' or spaces) that name a credential: "api_key", "OPENAI_API_KEY",
// "x-api-key", "Authorization", "secret_key", "client_secret",
// "access_token", "hf_token", "auth_token", "refresh_token", "bearer",
// "private_key", "password".
//
// Choice: suffix match on named credential kinds, so "api_key_env" (the
// name of an environment variable, not a key), "max_tokens" and a probe's
// answer "token" ("Yes") are allowed.
var secretSuffixes = []string{"apikey", "authorization", "secretkey", "secret", "accesstoken", "authtoken", "apitoken",
	"hftoken", "bearertoken", "refreshtoken", "sessiontoken", "bearer", "privatekey", "password"}

func secretKey(k string) bool {
	n := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(k))
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// holdsValue reports whether v, under a credential-like key, holds
// something: a non-empty string, or a non-empty list or object (a key
// list such as "api_key": ["sk-…"]).
func holdsValue(v any) bool {
	switch x := v.(type) {
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return false
}

// ConfigSecrets returns the JSON paths (e.g. "engine.api_key",
// "headers[0].Authorization") of every object key in config that names a
// credential (api_key, apikey, authorization, secret_key, access_token,
// password and the other secretSuffixes, in any case and with any '_'/'-'
// spelling, also as a suffix such as OPENAI_API_KEY) and holds a
// non-empty string, list or object, sorted. Invalid
// JSON gives nil. It is the guard CreateRun applies; it does not replace
// stripping credentials from configs before they are saved.
func ConfigSecrets(config []byte) []string {
	_, paths, _ := RedactConfig(config)
	return paths
}

// RedactConfig returns config re-encoded (indented by two spaces) with the
// value of every key ConfigSecrets names replaced by "[redacted]", and
// those paths, sorted. Invalid JSON gives an error and nothing else.
func RedactConfig(config []byte) (redacted []byte, paths []string, err error) {
	var v any
	if err := json.Unmarshal(config, &v); err != nil {
		return nil, nil, err
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if secretKey(k) && holdsValue(c) {
					paths = append(paths, p)
					x[k] = "[redacted]"
					continue
				}
				walk(p, c)
			}
		case []any:
			for i, c := range x {
				walk(path+"["+strconv.Itoa(i)+"]", c)
			}
		}
	}
	walk("", v)
	sort.Strings(paths) // map order is random; report deterministically
	redacted, err = json.MarshalIndent(v, "", "  ")
	return redacted, paths, err
}
