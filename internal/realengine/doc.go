// Package realengine holds the checks that scripts/real-engine runs against
// a real inference engine: llama.cpp's llama-server serving the tiny
// generated Qwen3 model of internal/ggufgen. The tests start
// their own servers on loopback and need three variables, which the
// script sets:
//
//	PERSUARENA_LLAMA_SERVER  the llama-server binary
//	PERSUARENA_REAL_MODEL    the GGUF model (scripts/ggufgen)
//	PERSUARENA_BIN           a built persuarena binary (the eval check)
//
// Without them the tests skip; the script fails when any of them skips,
// so in CI they always run.
package realengine
