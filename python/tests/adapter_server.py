"""The server the trainer-adapter tests play against.

Under go test ./server (server/adapters_test.go) it is that test's
in-process server, given as PERSUARENA_URL: the simulator persuadee in
reward mode both, 4 sessions, and a persuadee that takes 3 s to answer a
message containing "[slow]" (so ``slow`` is True). Otherwise it is a
``persuarena serve --reward both --scenarios arena,p4g`` launched from
the persuarena binary by _support.server_or_skip (skipped without a
binary, failed under CI), and the tests that need the slow persuadee
skip: server/adapters_test.go runs them.
"""

import os


# Sessions of a launched server.
LAUNCHED_CAPACITY = 16


def start(cls):
    """Sets cls.url (the WebSocket URL), cls.slow and cls.capacity (the
    server's --max-sessions; it refuses one more at once) for a test
    class; call it from setUpClass and stop from tearDownClass."""
    url = os.environ.get("PERSUARENA_URL", "")
    cls._adapter_srv = None
    if url:
        cls.url, cls.slow, cls.capacity = url, True, int(os.environ["PERSUARENA_TEST_CAPACITY"])
        return
    from _support import server_or_skip

    cls._adapter_srv = server_or_skip(cls, "--reward", "both", "--scenarios", "arena,p4g",
                                      "--max-sessions", str(LAUNCHED_CAPACITY))
    cls.url, cls.slow, cls.capacity = cls._adapter_srv.ws_url, False, LAUNCHED_CAPACITY


def stop(cls):
    if getattr(cls, "_adapter_srv", None) is not None:
        cls._adapter_srv.stop()
        cls._adapter_srv = None


def need_slow(test):
    """Skips test unless the server has the slow persuadee."""
    if not test.slow:
        test.skipTest("needs the slow persuadee of server/adapters_test.go's server (go test ./server runs it)")
