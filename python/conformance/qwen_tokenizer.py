"""A stand-in for a Hugging Face tokenizer of the Qwen2.5 family: it
replaces transformers' ``PreTrainedTokenizerFast`` loaded from the Qwen2.5
tokenizer files (vocabulary and chat template), which cannot be installed
or downloaded here. The upstream code under test (verl's
``apply_chat_template``, ``initialize_system_prompt``,
``initialize_turn_separator`` and its Qwen Continuous Token builder) runs
for real on top of it.

Tokens: ``<|endoftext|>`` (0, padding), ``<|im_start|>`` (1) and
``<|im_end|>`` (2, end of turn and eos) are special; every other character
is one token (its code point + 16). The chat template is Qwen2.5's
ChatML: each message renders as ``<|im_start|>ROLE\\nCONTENT<|im_end|>\\n``,
a conversation without a system message first gets Qwen's default system
prompt, and ``add_generation_prompt`` appends ``<|im_start|>assistant\\n``.
So the template puts a turn separator ("\\n") after each ``<|im_end|>``,
which a model that stops at ``<|im_end|>`` never generates: the case verl's
turn separator handles (verl v0.9.0,
verl/utils/tokenizer/chat_template.py:42-120).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

SPECIAL = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2}
BASE = 16
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


class QwenTokenizer:
    """The tokenizer methods verl and the agent loop call."""

    pad_token_id = SPECIAL["<|endoftext|>"]
    eos_token_id = SPECIAL["<|im_end|>"]
    pad_token = "<|endoftext|>"
    eos_token = "<|im_end|>"
    name_or_path = "Qwen/Qwen2.5-stand-in"

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        ids: List[int] = []
        i = 0
        while i < len(text):
            for tok, tid in SPECIAL.items():
                if text.startswith(tok, i):
                    ids.append(tid)
                    i += len(tok)
                    break
            else:
                ids.append(ord(text[i]) + BASE)
                i += 1
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        names = {v: k for k, v in SPECIAL.items()}
        out = []
        for i in ids:
            i = int(i)
            if i in names:
                if not skip_special_tokens:
                    out.append(names[i])
            else:
                out.append(chr(i - BASE))
        return "".join(out)

    def convert_tokens_to_ids(self, token: str) -> Optional[int]:
        return SPECIAL.get(token)

    def render(self, messages: List[Dict[str, Any]], add_generation_prompt: bool) -> str:
        """The chat template as text."""
        parts = []
        if not messages or messages[0].get("role") != "system":
            parts.append("<|im_start|>system\n%s<|im_end|>\n" % DEFAULT_SYSTEM)
        for m in messages:
            content = m.get("content") or ""
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
            parts.append("<|im_start|>%s\n%s<|im_end|>\n" % (m["role"], content))
        if add_generation_prompt:
            parts.append("<|im_start|>assistant\n")
        return "".join(parts)

    def apply_chat_template(self, messages, tokenize: bool = True, add_generation_prompt: bool = False,
                            tools=None, return_dict: bool = False, **kwargs):
        text = self.render(list(messages), add_generation_prompt)
        if not tokenize:
            return text
        ids = self.encode(text)
        return {"input_ids": ids} if return_dict else ids

    def __call__(self, text, add_special_tokens: bool = False, **kwargs):
        return {"input_ids": self.encode(text)}
