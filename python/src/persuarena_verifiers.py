"""PersuArena as a verifiers v1 taskset under a top-level id:
``eval persuarena-verifiers ...`` or ``--env.taskset.id persuarena_verifiers``.

verifiers v1 resolves a taskset id by probing
``importlib.util.find_spec("verifiers.v1.tasksets.<id>")`` before its
fallback to the id itself (verifiers/v1/utils/loaders.py:70-78 at
PrimeIntellect-ai/verifiers a60a606), and find_spec of a dotted id raises
ModuleNotFoundError there, so the taskset needs a module name without
dots. This module re-exports persuarena.verifiers' taskset and env
(built on first access, importing verifiers then) and its
``load_environment``.
"""

from typing import Any

from persuarena import verifiers as _impl
from persuarena.verifiers import load_environment

__all__ = ["PersuArenaTaskset", "PersuArenaVerifiersEnv", "load_environment"]


def __getattr__(name: str) -> Any:
    return getattr(_impl, name)
