"""Start and stop a local ``persuarena serve`` (see :func:`launch`)."""

from __future__ import annotations

import atexit
import collections
import re
import subprocess
import threading
import time
import weakref
from typing import Deque, List, Mapping, Optional, Type

from ._bin import find_binary
from ._http import get_json

__all__ = ["GRACEFUL_EXIT", "LaunchError", "Server", "launch"]

# The line `persuarena serve` writes to stderr once it listens
# (runs/serve.go, Service.Serve): "persuarena serve: http://HOST:PORT (...".
_LISTENING = re.compile(r"^persuarena serve: http://(\S+) ")

_live: "weakref.WeakSet[Server]" = weakref.WeakSet()

#: The exit status of ``persuarena serve`` after a graceful shutdown on
#: SIGTERM: 128 + 15, the CLI's convention for a command stopped by a
#: signal (cmd/persuarena/main.go, exitStatus; 130 after Ctrl-C).
GRACEFUL_EXIT = 143


class LaunchError(RuntimeError):
    """The server did not come up: the process exited, or it did not
    listen and answer /health within the time allowed. The message ends
    with the last lines the server wrote to stderr."""


class Server:
    """A running ``persuarena serve`` process started by :func:`launch`.

    ``base_url`` is ``http://127.0.0.1:PORT``, ``ws_url`` its ``/ws``
    channel. Use it as a context manager, or call :meth:`stop`; servers
    still running when Python exits are stopped then."""

    def __init__(self, proc: subprocess.Popen, addr: str, log: Deque[str], reader: threading.Thread):
        self.process = proc
        self.addr = addr
        self.base_url = "http://" + addr
        self.ws_url = "ws://" + addr + "/ws"
        self._log = log
        self._reader = reader
        _live.add(self)

    def log_tail(self) -> str:
        """The last (up to 200) lines the server wrote to stderr."""
        return "\n".join(self._log)

    def running(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def stop(self, timeout_s: float = 15.0) -> int:
        """Stops the server: SIGTERM (a graceful shutdown: WebSocket
        sessions get close code 1001, requests in flight up to 10 s),
        then SIGKILL after ``timeout_s`` seconds. Returns the exit status:
        :data:`GRACEFUL_EXIT` (143) after a graceful shutdown, -9 when it
        had to be killed, another value if it had already exited. Safe to
        call twice."""
        p = self.process
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout_s)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._reader.join(5)
        if p.stderr is not None:
            p.stderr.close()
        _live.discard(self)
        return p.returncode

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return "<persuarena Server %s pid %d%s>" % (self.base_url, self.process.pid, "" if self.running() else " stopped")


@atexit.register
def _stop_all() -> None:
    for s in list(_live):
        s.stop(5)


def launch(*flags: str, binary: Optional[str] = None, host: str = "127.0.0.1",
           ready_timeout_s: float = 30.0, env: Optional[Mapping[str, str]] = None,
           server_class: Type[Server] = Server) -> Server:
    """Starts ``persuarena serve --addr HOST:0 FLAGS...`` on a free port the
    kernel picks (no race with other processes for the port), waits until
    it listens and ``GET /health`` answers, and returns the
    :class:`Server`.

    ``flags`` are further ``persuarena serve`` flags, e.g.
    ``launch("--reward", "both", "--scenarios", "arena,p4g")``
    (docs/server.md lists them). ``server_class`` is the :class:`Server`
    subclass returned (:func:`persuarena.client.launch` passes the one with
    client methods). ``binary`` is the executable to run;
    default :func:`persuarena._bin.find_binary`'s choice (PERSUARENA_BIN,
    the wheel's bundled binary, PATH). ``env`` replaces the child's
    environment (default: this process's). ``host`` is the address to
    listen on (default loopback; an IPv6 literal such as "::1" is
    bracketed for Go). ``ready_timeout_s`` bounds the
    whole start-up in seconds.

    Raises BinaryNotFound without a binary, LaunchError when the server
    exits or is not ready in time; on that or any other exception (a
    KeyboardInterrupt while waiting, ServerError when /health answers
    with an error status) the process is killed first."""
    path = find_binary(binary)
    cmd = [path, "serve", "--addr", _listen_addr(host)] + list(flags)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(env) if env is not None else None, text=True, encoding="utf-8", errors="replace")
    log: Deque[str] = collections.deque(maxlen=200)
    found = threading.Event()
    addr: List[str] = []

    def read():
        # Drains stderr for the process's life, so that a verbose server
        # never blocks on a full pipe.
        for line in proc.stderr:
            line = line.rstrip("\n")
            log.append(line)
            if not addr:
                m = _LISTENING.match(line)
                if m:
                    addr.append(m.group(1))
                    found.set()
        found.set()

    reader = threading.Thread(target=read, name="persuarena-serve-stderr", daemon=True)
    reader.start()

    def fail(why: str) -> LaunchError:
        _reap(proc, reader)
        return LaunchError("%s: %s\n%s" % (" ".join(cmd), why, "\n".join(log)))

    try:
        return _ready(proc, addr, log, reader, found, ready_timeout_s, fail, server_class)
    except LaunchError:
        raise
    except BaseException:
        # Anything else (Ctrl-C while waiting, an error answer from
        # /health) must not leave a server running that nobody holds.
        _reap(proc, reader)
        raise


def _listen_addr(host: str) -> str:
    """The --addr value for host on a port the kernel picks: "HOST:0", an
    IPv6 literal in brackets ("[::1]:0"), as Go's net.JoinHostPort writes
    it."""
    return "[%s]:0" % host if ":" in host and not host.startswith("[") else "%s:0" % host


def _reap(proc: subprocess.Popen, reader: threading.Thread) -> None:
    """Kills proc if it still runs, waits for it and closes its stderr."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    reader.join(5)
    if proc.stderr is not None:
        proc.stderr.close()


def _ready(proc: subprocess.Popen, addr: list, log: Deque[str], reader: threading.Thread, found: threading.Event,
           ready_timeout_s: float, fail, server_class: Type[Server]) -> Server:
    """Waits for the listening line and a /health answer; returns the
    server_class instance, or raises fail(why)."""
    deadline = time.monotonic() + ready_timeout_s
    if not found.wait(ready_timeout_s):
        raise fail("not listening after %g s" % ready_timeout_s)
    if not addr:
        # stderr ended without the listening line: the process is exiting
        # (its status may not be ready yet at EOF).
        try:
            code = proc.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise fail("closed stderr without listening") from None
        raise fail("exited with status %d before listening" % code)
    srv = server_class(proc, addr[0], log, reader)
    try:
        while True:
            try:
                get_json(srv.base_url + "/health", timeout=2)
                return srv
            except (OSError, ValueError):
                pass
            if proc.poll() is not None:
                raise fail("exited with status %d" % proc.returncode)
            if time.monotonic() > deadline:
                raise fail("GET /health did not answer within %g s" % ready_timeout_s)
            time.sleep(0.05)
    except BaseException:
        _live.discard(srv)
        raise
