"""The environment's ``server`` entry point: runs ``persuarena serve`` on
0.0.0.0:$PORT (default 8000, openenv.yaml's port), replacing this process,
so signals and the exit status are the server's.

The binary is PERSUARENA_BIN when set, else the one bundled in the
openenv-persuarena platform wheel when that package is installed, else
``persuarena`` on PATH (server/Dockerfile installs it there). Further
``persuarena serve`` flags come from PERSUARENA_SERVE_FLAGS (split like a
shell does) and from the command line. Exits with status 127 and a message
when there is no binary.
"""

import os
import shlex
import shutil
import sys


def find_binary():
    """The persuarena binary to run, or None."""
    explicit = os.environ.get("PERSUARENA_BIN")
    if explicit:
        return explicit
    try:
        from persuarena._bin import BinaryNotFound, find_binary as bundled
    except ImportError:
        return shutil.which("persuarena")
    try:
        return bundled()
    except BinaryNotFound:
        return None


def main():
    binary = find_binary()
    if not binary:
        sys.exit("persuarena_env: no persuarena binary (set PERSUARENA_BIN, install openenv-persuarena's platform "
                 "wheel, or put persuarena on PATH)")
    port = os.environ.get("PORT", "8000")
    argv = [binary, "serve", "--addr", "0.0.0.0:" + port]
    argv += shlex.split(os.environ.get("PERSUARENA_SERVE_FLAGS", "")) + sys.argv[1:]
    os.execv(binary, argv)


if __name__ == "__main__":
    main()
