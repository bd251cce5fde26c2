"""A stand-in for the openai SDK (not installable here), holding only what
verifiers v1 touches when it relays a chat completion: the response types
of ``openai.types.chat`` (pydantic models with the OpenAI API's field
names, types/chat) and the SDK's exception classes. Any other name is an
import-time placeholder (conformance/stubs.py); the SDK's clients are
never called in the conformance tests (the inference server is
test_verifiers.ModelServer)."""

import stubs


class OpenAIError(Exception):
    pass


class APIConnectionError(OpenAIError):
    pass


class APIStatusError(OpenAIError):
    pass


class APITimeoutError(APIConnectionError):
    pass


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return stubs._stub_class(name)
