package reporeward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// Input is what a reward model scores: the public scenario, the episode
// (terminal, R_goal) and the visible transcript.
type Input struct {
	Public     scenario.Public
	Episode    *episode.Episode
	Transcript []episode.Message
}

// Model is R_model: a reward model's score of a conversation. Safe for
// concurrent use.
type Model interface {
	Score(ctx context.Context, in Input) (float64, error)
}

// Outcome is the simulator's base reward: R_model = the episode's R_goal
// (Probe-RPO paper's goal rewards: accept +3, conditional +1, pending -1,
// reject -3).
type Outcome struct{}

// Score returns in.Episode.RGoal.
func (Outcome) Score(_ context.Context, in Input) (float64, error) { return in.Episode.RGoal, nil }

// Constant is a fixed R_model.
type Constant float64

// Score returns c.
func (c Constant) Score(context.Context, Input) (float64, error) { return float64(c), nil }

// Scaled multiplies a model's score by Scale.
type Scaled struct {
	Model Model
	Scale float64
}

// Score returns Scale·Model.Score.
func (s Scaled) Score(ctx context.Context, in Input) (float64, error) {
	v, err := s.Model.Score(ctx, in)
	return s.Scale * v, err
}

// RenderTranscript writes the conversation as the reward model, the
// judges and the Bradley–Terry features read it: one "Agent: ..." or
// "Partner: ..." line per message.
func RenderTranscript(tr []episode.Message) string {
	var b strings.Builder
	for _, m := range tr {
		if m.Speaker == episode.PersuaderSpeaker {
			b.WriteString("Agent: ")
		} else {
			b.WriteString("Partner: ")
		}
		b.WriteString(strings.TrimSpace(m.Text))
		b.WriteByte('\n')
	}
	return b.String()
}

// The HTTP reward-model APIs of HTTPModel.
const (
	// APIVLLMPooling is vLLM's POST /pooling with {"model", "input"}; the
	// answer's data[0].data is the score, or a list whose last element
	// (the last token's reward) is.
	APIVLLMPooling = "vllm-pooling"
	// APIVLLMClassify is vLLM's POST /classify with {"model", "input":
	// [text]}; the score is data[0].probs[last] (the positive class).
	APIVLLMClassify = "vllm-classify"
	// APIVLLMScore is vLLM's POST /score with {"model", "text_1":
	// context, "text_2": reply}; the score is data[0].score.
	APIVLLMScore = "vllm-score"
	// APISGLang is SGLang's POST /classify of a reward model launched with
	// --is-embedding, {"model", "text": [text]}; the score is
	// [0].embedding[0].
	APISGLang = "sglang"
)

// APIs lists the HTTP reward-model APIs.
var APIs = []string{APIVLLMPooling, APIVLLMClassify, APIVLLMScore, APISGLang}

// HTTPModel scores a conversation with a reward or score model served by
// an inference engine. The request and answer shapes are those the
// engines document for their pooling/reward models: vLLM's pooling models
// page ("Pooling Models", docs.vllm.ai/en/v0.11.2/models/pooling_models/:
// --runner pooling, tasks reward/classify/score; the online endpoints
// /pooling, /classify and /score of its OpenAI-compatible server) and
// SGLang's reward models page (docs.sglang.io/docs/supported-models/
// reward_models: reward models run with --is-embedding and answer
// /classify). The text sent is RenderTranscript of the conversation; with
// APIVLLMScore, text_1 is everything before the agent's last utterance
// and text_2 that utterance.
type HTTPModel struct {
	URL, API, Model string
	// Client is the HTTP client (nil: one with a 60 s timeout).
	Client *http.Client
}

// Score posts the conversation and reads the score. Errors: transport
// errors, a non-2xx status (with the start of the body), an answer of
// another shape, a non-finite score.
func (h *HTTPModel) Score(ctx context.Context, in Input) (float64, error) {
	text := RenderTranscript(in.Transcript)
	var path string
	var body any
	switch h.API {
	case APIVLLMPooling:
		path, body = "/pooling", map[string]any{"model": h.Model, "input": text}
	case APIVLLMClassify:
		path, body = "/classify", map[string]any{"model": h.Model, "input": []string{text}}
	case APIVLLMScore:
		ctxText, last := text, ""
		if n := len(in.Transcript); n > 0 {
			k := n - 1
			for k > 0 && in.Transcript[k].Speaker != episode.PersuaderSpeaker {
				k--
			}
			ctxText, last = RenderTranscript(in.Transcript[:k]), RenderTranscript(in.Transcript[k:k+1])
		}
		path, body = "/score", map[string]any{"model": h.Model, "text_1": ctxText, "text_2": last}
	case APISGLang:
		path, body = "/classify", map[string]any{"model": h.Model, "text": []string{text}}
	default:
		return 0, fmt.Errorf("reward model: unknown api %q", h.API)
	}
	raw, err := h.post(ctx, path, body)
	if err != nil {
		return 0, err
	}
	v, err := parseScore(h.API, raw)
	if err != nil {
		return 0, fmt.Errorf("reward model %s%s: %w", h.URL, path, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("reward model %s%s: score %v is not finite", h.URL, path, v)
	}
	return v, nil
}

func (h *HTTPModel) post(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.URL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reward model: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reward model %s%s: %w", h.URL, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("reward model %s%s: %w", h.URL, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("reward model %s%s: HTTP %d: %.200s", h.URL, path, resp.StatusCode, raw)
	}
	return raw, nil
}

var errShape = errors.New("answer has no score where the API puts it")

// parseScore reads the score from an answer of api.
func parseScore(api string, raw []byte) (float64, error) {
	switch api {
	case APIVLLMPooling, APIVLLMClassify, APIVLLMScore:
		var a struct {
			Data []struct {
				Data  json.RawMessage `json:"data"`
				Probs []float64       `json:"probs"`
				Score *float64        `json:"score"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &a); err != nil || len(a.Data) == 0 {
			return 0, errShape
		}
		d := a.Data[0]
		switch api {
		case APIVLLMScore:
			if d.Score != nil {
				return *d.Score, nil
			}
		case APIVLLMClassify:
			if len(d.Probs) > 0 {
				return d.Probs[len(d.Probs)-1], nil
			}
		default:
			return lastNumber(d.Data)
		}
	case APISGLang:
		var a []struct {
			Embedding []float64 `json:"embedding"`
		}
		if err := json.Unmarshal(raw, &a); err == nil && len(a) > 0 && len(a[0].Embedding) > 0 {
			return a[0].Embedding[0], nil
		}
		var one struct {
			Embedding []float64 `json:"embedding"`
		}
		if err := json.Unmarshal(raw, &one); err == nil && len(one.Embedding) > 0 {
			return one.Embedding[0], nil
		}
	}
	return 0, errShape
}

// lastNumber reads a number, or the last number of a (nested) list.
func lastNumber(raw json.RawMessage) (float64, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, errShape
	}
	for {
		switch x := v.(type) {
		case float64:
			return x, nil
		case []any:
			if len(x) == 0 {
				return 0, errShape
			}
			v = x[len(x)-1]
		default:
			return 0, errShape
		}
	}
}
