"""The package version: the Go module's release, read from
internal/buildinfo/VERSION (its one home). A built wheel carries it in
_release.py, written by the build backend (python/build_backend); a source
tree reads the file."""

from __future__ import annotations

import os


def _read() -> str:
    try:
        from ._release import RELEASE  # written into wheels by the build backend
        return RELEASE
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "..", "internal", "buildinfo", "VERSION")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return "0+unknown"


__version__ = _read()
