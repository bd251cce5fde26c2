"""What every conformance suite shares: the import-time stubs, torch 1.13
compatibility names, the suite's upstream folder, and the persuarena
server the adapters play against.

run.py starts each suite in its own process with PYTHONPATH = the
upstream folder(s), the persuarena package under test and this folder, and
sets CONFORMANCE_UPSTREAM (the folder name, e.g. verl-v0.9.0) and
PERSUARENA_BIN (the server binary).
"""

from __future__ import annotations

import os
import sys
from typing import Dict, Iterable, Optional

import stubs

HERE = os.path.dirname(os.path.abspath(__file__))

#: The upstream folder this process tests (../shared/conformance/upstream/NAME).
UPSTREAM = os.environ.get("CONFORMANCE_UPSTREAM", "")

#: The folder of the upstream folders (run.py's PERSUARENA_CONFORMANCE_UPSTREAM).
UPSTREAM_DIR = os.environ.get("CONFORMANCE_UPSTREAM_DIR") or os.path.join(HERE, "..", "..", "..", "shared",
                                                                           "conformance", "upstream")

#: The checkout under test: the parent of run.py's --src (CONFORMANCE_SRC),
#: whose docs and integrations/ the tests read, else this one.
ROOT = os.path.dirname(os.path.abspath(os.environ["CONFORMANCE_SRC"])) if os.environ.get("CONFORMANCE_SRC") \
    else os.path.abspath(os.path.join(HERE, "..", ".."))


def setup(extra: Iterable[str] = (), versions: Optional[Dict[str, str]] = None, keep: Iterable[str] = ()) -> None:
    """Installs the stubs (stubs.HEAVY but keep, the broken torch
    submodules, and extra) and the torch compatibility names; call before
    importing the upstream package. keep names heavy packages a suite puts
    a stand-in on the path for (standins/)."""
    heavy = tuple(n for n in stubs.HEAVY if n not in set(keep))
    stubs.install(heavy + stubs.TORCH_BROKEN + tuple(extra), versions)
    torch_compat()


def torch_compat() -> None:
    """Names torch >= 2 added that the upstream modules only reference at
    import time (annotations, module-level aliases), on Debian's torch 1.13:
    ``torch.optim.lr_scheduler.LRScheduler`` (torch 2.0's public name of
    ``_LRScheduler``) and ``torch.distributed.DeviceMesh`` /
    ``init_device_mesh`` (placeholders: nothing here shards a model)."""
    try:
        import torch.distributed as dist
        import torch.optim.lr_scheduler as sched
    except ImportError:
        return
    if not hasattr(sched, "LRScheduler"):
        sched.LRScheduler = sched._LRScheduler
    for name in ("DeviceMesh", "init_device_mesh"):
        if not hasattr(dist, name):
            setattr(dist, name, stubs._stub_class(name))


def upstream_is(*prefixes: str) -> bool:
    """Whether this process tests an upstream folder starting with one of
    prefixes (e.g. "verl-v0.8")."""
    return any(UPSTREAM.startswith(p) for p in prefixes)


def server(*flags: str):
    """Launches the persuarena binary under test (PERSUARENA_BIN) with
    --reward both and flags; fails (never skips) without one."""
    from persuarena.client import launch

    if not os.environ.get("PERSUARENA_BIN"):
        raise AssertionError("PERSUARENA_BIN is not set: run the suites through python/conformance/run.py")
    return launch("--reward", "both", *flags)


# arena-train-0029 at seed 7, whose persuadee accepts at turn 4 (R_goal =
# +3) after these four honest answers: python/tests/_support.py's copy of
# server/openenv_test.go's scriptLines.
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from _support import SCRIPT_LINES, SCRIPT_RESET  # noqa: E402,F401
