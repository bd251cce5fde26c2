"""PersuArena from Python: a client of ``persuarena serve`` (the
OpenEnv-compatible persuasion environment server), the server itself in
the platform wheels (the ``persuarena`` console script), and environment
adapters for trainers and evaluation harnesses.

Modules: :mod:`persuarena.client` (standard library only: the clients,
typed observations, MCP tools, ``launch()``) and :mod:`persuarena.verifiers`
(a verifiers v1 environment). Trainer and harness modules import their
framework lazily, so ``import persuarena`` needs nothing else.

``__version__`` is the Go module's release (internal/buildinfo/VERSION);
a platform wheel's bundled binary reports the same release in
``GET /metadata``'s version.
"""

from ._version import __version__

__all__ = ["__version__"]
