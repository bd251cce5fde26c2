"""Where the ``persuarena`` Go binary is: one lookup shared by the
``persuarena`` console script and :func:`persuarena.client.launch`."""

from __future__ import annotations

import os
import shutil
from typing import Optional

__all__ = ["BinaryNotFound", "bundled_binary", "find_binary"]


class BinaryNotFound(FileNotFoundError):
    """No ``persuarena`` binary was found (see :func:`find_binary`)."""


def bundled_binary() -> Optional[str]:
    """The binary shipped inside this package's platform wheel
    (``persuarena/bin/persuarena``), or None in a pure install."""
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "persuarena")
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


def _is_script(path: str) -> bool:
    # The console script pip writes for this package starts with "#!";
    # the Go binary is an executable image (ELF on Linux).
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def find_binary(explicit: Optional[str] = None) -> str:
    """Returns the path of the ``persuarena`` binary to run, the first of:
    ``explicit``; the ``PERSUARENA_BIN`` environment variable; the binary
    bundled in the wheel; ``persuarena`` on PATH that is not a script (so
    that this package's own console script is never found).

    Raises BinaryNotFound when ``explicit`` or ``PERSUARENA_BIN`` names no
    executable file, or when no candidate exists."""
    for what, p in (("binary", explicit), ("PERSUARENA_BIN", os.environ.get("PERSUARENA_BIN"))):
        if p:
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
            raise BinaryNotFound("%s %r is not an executable file" % (what, p))
    p = bundled_binary()
    if p:
        return p
    for d in os.environ.get("PATH", "").split(os.pathsep):
        c = shutil.which("persuarena", path=d) if d else None
        if c and not _is_script(c):
            return c
    raise BinaryNotFound(
        "no persuarena binary: this install has none bundled (a pure wheel or a source tree) and none is on PATH; "
        "install a platform wheel, set PERSUARENA_BIN, or build it with `go build ./cmd/persuarena`")
