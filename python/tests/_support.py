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

# The reset of the example session in docs/server.md, whose persuadee
# accepts at turn 4 (R_goal = +3) after the built-in script persuader's four lines
# (server/openenv_test.go, scriptLines).
SCRIPT_RESET = {"set": "arena", "scenario_id": "arena-train-0029", "seed": 7, "reward": "both"}
SCRIPT_LINES = [
    "Priya, what's the biggest thing holding you back at the moment?",
    "About room of strangers terrifies, the evidence from people who went through the same thing is reassuring; most found it easier to handle than they feared. What else is on your mind, apart from room of strangers terrifies?",
    "Thanks for raising solitude. Studies of people in a similar situation find that it is one of the easier things to sort out. Help me understand what solitude means for you day to day.",
    "I hear you on cliques. Most people who had the same worry found a way to handle it within a few weeks. Is there anything besides cliques that concerns you?",
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
