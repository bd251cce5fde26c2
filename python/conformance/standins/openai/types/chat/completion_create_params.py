"""openai.types.chat.completion_create_params stand-in: the request body
is a JSON object."""

from typing import Any, Dict

CompletionCreateParams = Dict[str, Any]
