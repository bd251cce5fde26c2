package store

import (
	"slices"
	"testing"
)

// Credential-like keys at any depth are found and redacted; the variable
// name api_key_env and an empty key are not secrets.
func TestRedactConfig(t *testing.T) {
	in := []byte(`{"api_key_env": "OPENAI_API_KEY", "engine": {"OPENAI_API_KEY": "sk-1", "api_key": ""},
		"headers": [{"Authorization": "Bearer x"}], "max_tokens": 5}`)
	red, paths, err := RedactConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"engine.OPENAI_API_KEY", "headers[0].Authorization"}; !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	want := `{
  "api_key_env": "OPENAI_API_KEY",
  "engine": {
    "OPENAI_API_KEY": "[redacted]",
    "api_key": ""
  },
  "headers": [
    {
      "Authorization": "[redacted]"
    }
  ],
  "max_tokens": 5
}`
	if string(red) != want {
		t.Fatalf("redacted:\n%s", red)
	}
	if got := ConfigSecrets(in); !slices.Equal(got, paths) {
		t.Fatalf("ConfigSecrets %v", got)
	}
	red, paths, err = RedactConfig([]byte(`{"hf_token": "hf_x", "client_secret": "s", "keys": {"private_key": ["k1"]},
		"basis": [{"yes": {"token": "Yes"}}], "max_tokens": 9, "api_key": []}`))
	if want := []string{"client_secret", "hf_token", "keys.private_key"}; err != nil || !slices.Equal(paths, want) {
		t.Fatalf("paths %v (%v), want %v:\n%s", paths, err, want, red)
	}
	if _, _, err := RedactConfig([]byte("{")); err == nil || ConfigSecrets([]byte("{")) != nil {
		t.Fatal("invalid JSON accepted")
	}
}
