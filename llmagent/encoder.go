package llmagent

import (
	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/llm"
)

// NewEncoder returns a text encoder (bdi.Encoder) on the embeddings
// endpoint of c's backend: POST {base_url}/embeddings in the
// OpenAI-compatible shape (bdi.HTTPEncoder with bdi.StyleOpenAI: vLLM and
// SGLang pooling models, llama-server with --embeddings, Ollama, OpenAI),
// with the backend's model, API key variable and timeout. Embeddings are
// unit-normalised and memoised by text (bdi.Memo). The endpoint is not
// contacted until the first Encode; its errors name the URL and status.
func NewEncoder(c *llm.Client) bdi.Encoder {
	b := c.Backend()
	return bdi.NewMemo(&bdi.HTTPEncoder{BaseURL: b.BaseURL, Model: b.Model, Style: bdi.StyleOpenAI, APIKeyEnv: b.APIKeyEnv, Timeout: b.Timeout})
}
