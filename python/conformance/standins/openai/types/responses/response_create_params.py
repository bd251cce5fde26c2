"""openai.types.responses.response_create_params stand-in."""

from typing import Any, Dict

ResponseCreateParams = Dict[str, Any]
