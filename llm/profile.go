package llm

// Profile is what PersuArena assumes of an engine before Detect looks
// (docs/engines.md cites the source of each fact).
type Profile struct {
	// Engine is the profile's engine.
	Engine Engine
	// MaxTopLogprobs caps chat top_logprobs (vLLM: --max-logprobs, default
	// 20; Ollama and OpenAI: 20).
	MaxTopLogprobs int
	// MaxCompletionLogprobs, when > 0, further caps /v1/completions
	// logprobs (OpenAI: 5).
	MaxCompletionLogprobs int
	// TokenIDLogprobs: candidates can carry exact token ids (vLLM
	// return_tokens_as_token_ids + logprob_token_ids; llama-server ids on
	// /completion).
	TokenIDLogprobs bool
	// PromptLists: one completion request may carry several prompts.
	PromptLists bool
	// Tokenize: the engine has a tokenize endpoint.
	Tokenize bool
	// ApplyTemplate: the chat template can be rendered without inference
	// (llama-server /apply-template; vLLM /tokenize with messages then
	// /detokenize).
	ApplyTemplate bool
	// CachedTokens: the engine can report prompt tokens served from its
	// prefix cache.
	CachedTokens bool
	// CachedTokensHint says how to turn cached-token reporting on.
	CachedTokensHint string
	// ChatLogprobs: chat completions return log-probs.
	ChatLogprobs bool
	// CompletionLogprobs: /v1/completions (or /completion) return log-probs.
	CompletionLogprobs bool
	// StructuredOutput: response_format json_schema is honoured.
	StructuredOutput bool
	// ThinkingKwargs: thinking is switched via chat_template_kwargs.
	ThinkingKwargs bool
	// ContinueFinal: continue_final_message is accepted.
	ContinueFinal bool
}

// ProfileFor returns the profile of e (the zero Profile for an unknown
// engine).
func ProfileFor(e Engine) Profile {
	switch e {
	case VLLM:
		return Profile{Engine: e, MaxTopLogprobs: 20, TokenIDLogprobs: true,
			PromptLists: true, Tokenize: true, ApplyTemplate: true, CachedTokens: true,
			CachedTokensHint: "start vLLM with --enable-prompt-tokens-details",
			ChatLogprobs:     true, CompletionLogprobs: true, StructuredOutput: true, ThinkingKwargs: true, ContinueFinal: true}
	case SGLang:
		return Profile{Engine: e, MaxTopLogprobs: 20,
			PromptLists: true, Tokenize: true, CachedTokens: true,
			CachedTokensHint: "start SGLang with --enable-cache-report",
			ChatLogprobs:     true, CompletionLogprobs: true, StructuredOutput: true, ThinkingKwargs: true, ContinueFinal: true}
	case LlamaCpp:
		return Profile{Engine: e, MaxTopLogprobs: 20, TokenIDLogprobs: true,
			PromptLists: true, Tokenize: true, ApplyTemplate: true, CachedTokens: true,
			CachedTokensHint: "llama-server reports tokens_cached / timings.cache_n; keep cache_prompt on",
			ChatLogprobs:     true, CompletionLogprobs: true, StructuredOutput: true, ThinkingKwargs: true}
	case Ollama:
		return Profile{Engine: e, MaxTopLogprobs: 20, CachedTokensHint: "Ollama does not report cached tokens",
			ChatLogprobs: true, StructuredOutput: true}
	case OpenAI:
		return Profile{Engine: e, MaxTopLogprobs: 20, MaxCompletionLogprobs: 5,
			PromptLists: true, CachedTokens: true,
			ChatLogprobs: true, CompletionLogprobs: true, StructuredOutput: true}
	}
	return Profile{Engine: e}
}
