"""Shared test helpers: the server binary, and one launched server per
test module.

The tests import ``persuarena`` as installed (CI: from the built wheel in
a fresh venv) or from ``python/src`` when PYTHONPATH points there. A test
that needs the server gets it from :func:`server_or_skip`: without a
binary it is skipped, but under CI (the CI environment variable set) it
fails, so CI cannot pass without running it.
"""

from __future__ import annotations

import os
import unittest

from persuarena._bin import BinaryNotFound, find_binary
from persuarena.client import launch

# arena-train-0029 at seed 7, whose persuadee accepts at turn 4 (R_goal =
# +3) after these four honest answers (server/openenv_test.go, scriptLines;
# the one copy the Python tests use).
SCRIPT_RESET = {"set": "arena", "scenario_id": "arena-train-0029", "seed": 7, "reward": "both"}
SCRIPT_LINES = [
    "Priya, what's the biggest thing holding you back at the moment?",
    "On average, new members say the first evening was easier than they feared: the club pairs every nervous first-timer with a host who meets them at the door, so nobody walks in alone. What else is on your mind?",
    "The evidence from people who enjoy their own company is that one evening out a week adds to it rather than replacing it, and you can leave whenever you like. What else worries you about it?",
    "Half of the members joined this year, so the regulars make a point of welcoming newcomers and nobody stays an outsider for long. It's entirely your decision. Would you be willing to give it a try?",
]


def have_binary() -> bool:
    try:
        find_binary()
        return True
    except BinaryNotFound:
        return False


def server_or_skip(testcase: unittest.TestCase, *flags: str):
    """Launches ``persuarena serve FLAGS`` for a test class (call it from
    setUpClass with the class), or skips it without a binary (fails under
    CI)."""
    if not have_binary():
        if os.environ.get("CI"):
            raise AssertionError("no persuarena binary (CI must run the server tests): set PERSUARENA_BIN or install the platform wheel")
        raise unittest.SkipTest("no persuarena binary (set PERSUARENA_BIN)")
    return launch(*flags)
