"""The ``persuarena`` console script: replaces this Python process by the
Go binary (found by :func:`persuarena._bin.find_binary`) with the same
arguments, so ``persuarena serve ...`` behaves exactly as the binary does
(signals, exit status, stdio)."""

from __future__ import annotations

import os
import subprocess
import sys

from ._bin import BinaryNotFound, find_binary


def main() -> None:
    try:
        path = find_binary()
    except BinaryNotFound as exc:
        print("persuarena: %s" % exc, file=sys.stderr)
        sys.exit(127)
    argv = [path] + sys.argv[1:]
    if os.name == "posix":
        os.execv(path, argv)
    sys.exit(subprocess.call(argv))


if __name__ == "__main__":
    main()
