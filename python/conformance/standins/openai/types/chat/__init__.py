"""openai.types.chat stand-in: the chat completion response as the OpenAI
API defines it (object "chat.completion"), lenient about extra fields."""

from typing import Any, List, Optional

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class ChatCompletionMessage(_Model):
    role: str = "assistant"
    content: Optional[str] = None
    tool_calls: Optional[List[Any]] = None


class Choice(_Model):
    index: int = 0
    finish_reason: Optional[str] = None
    message: ChatCompletionMessage


class CompletionUsage(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: Optional[Any] = None
    completion_tokens_details: Optional[Any] = None


class ChatCompletion(_Model):
    id: str
    object: str = "chat.completion"
    created: int
    model: str
    choices: List[Choice]
    usage: Optional[CompletionUsage] = None
    service_tier: Optional[str] = None
