"""openai.types.responses stand-in: placeholders (the Responses dialect is
not used by the conformance tests)."""

import stubs


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return stubs._stub_class(name)
