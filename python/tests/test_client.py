"""persuarena.client: parsing, the WebSocket codec, and episodes against
a launched ``persuarena serve`` over HTTP and WebSocket, sync and async.

Run: ``python3 -m unittest discover -s python/tests`` (with the package
installed, or PYTHONPATH=python/src, and a binary: PERSUARENA_BIN or the
wheel's)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import tempfile
import threading
import time
import unittest

from _support import SCRIPT_LINES, SCRIPT_RESET, server_or_skip

from persuarena import _ws
from persuarena.client import (
    ConnectionClosed, HTTPPersuArenaEnv, PersuArenaAction, PersuArenaEnv, ServerError, StepResult,
    SyncPersuArenaEnv, _urls, parse_result, parse_state,
)

OBS = {"reply": "Fine.", "turn": 2, "tmax": 10, "decision": "continue",
       "metadata": {"episode_id": "ep-1", "reward_mode": "both", "acts": ["evidence"], "belief": 0.5,
                    "dense": 0.25, "reward_missing": False, "terminal": ""}}


class ParseTest(unittest.TestCase):
    def test_nested_metadata_only(self):
        # Today's wire form: metadata inside the observation only. Both
        # StepResult.metadata and observation.metadata get it.
        r = parse_result({"observation": OBS, "reward": 0.25, "done": False})
        self.assertIsInstance(r, StepResult)
        self.assertEqual(r.metadata["episode_id"], "ep-1")
        self.assertIs(r.observation.metadata, r.metadata)
        self.assertEqual((r.reward, r.done, r.observation.turn, r.observation.belief, r.observation.dense),
                         (0.25, False, 2, 0.5, 0.25))
        self.assertIsNone(r.observation.scenario)

    def test_top_level_metadata_wins(self):
        # OpenEnv's typed clients: payload.get("metadata", obs.get("metadata", {})).
        top = dict(OBS["metadata"], episode_id="ep-top")
        r = parse_result({"observation": OBS, "reward": 1.0, "done": True, "metadata": top})
        self.assertEqual(r.metadata["episode_id"], "ep-top")
        self.assertEqual(r.observation.episode_id, "ep-top")
        self.assertTrue(r.observation.done)

    def test_no_metadata(self):
        obs = {k: v for k, v in OBS.items() if k != "metadata"}
        r = parse_result({"observation": obs, "reward": None, "done": False})
        self.assertEqual(r.metadata, {})
        self.assertEqual(r.observation.terminal, "")

    def test_scenario_and_unknown_fields(self):
        sc = {"id": "s1", "domain": "d", "family": "charity", "proposal": "p", "accept_means": "a",
              "conditional_means": "c", "persuader": {"role": "friend"}, "persuadee": {"name": "Ann", "role": "friend"},
              "relationship": "friends", "closeness": "close", "background": "b", "new_field": 1}
        r = parse_result({"observation": dict(OBS, scenario=sc, turn=0, extra=True), "reward": None, "done": False})
        self.assertEqual(r.observation.scenario.persuadee.name, "Ann")
        self.assertEqual(r.observation.scenario.persuader.name, "")
        st = parse_state({"episode_id": "e", "step_count": 3, "beliefs": [0.1, None], "future": "x"})
        self.assertEqual((st.episode_id, st.step_count, st.beliefs), ("e", 3, [0.1, None]))

    def test_action_payload(self):
        self.assertEqual(PersuArenaAction("hi").to_dict(), {"message": "hi"})
        self.assertEqual(PersuArenaAction("hi", {"k": 1}).to_dict(), {"message": "hi", "metadata": {"k": 1}})

    def test_urls(self):
        for base in ("http://127.0.0.1:8000", "http://127.0.0.1:8000/", "ws://127.0.0.1:8000/ws"):
            self.assertEqual(_urls(base), ("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"))
        self.assertEqual(_urls("https://h.example/env"), ("https://h.example/env", "wss://h.example/env/ws"))
        with self.assertRaises(ValueError):
            _urls("ftp://x")


def _server_frame(opcode, payload, fin=True):
    n = len(payload)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        return struct.pack("!BB", b0, n) + payload
    if n < 65536:
        return struct.pack("!BBH", b0, 126, n) + payload
    return struct.pack("!BBQ", b0, 127, n) + payload


def _unmask(frame):
    """Decodes one masked client frame: (opcode, payload, rest), or None
    while the frame is incomplete."""
    if len(frame) < 2:
        return None
    b0, b1 = frame[0], frame[1]
    assert b1 & 0x80, "client frames must be masked"
    n, off = b1 & 0x7F, 2
    if n == 126:
        if len(frame) < 4:
            return None
        n, off = struct.unpack_from("!H", frame, 2)[0], 4
    elif n == 127:
        if len(frame) < 10:
            return None
        n, off = struct.unpack_from("!Q", frame, 2)[0], 10
    if len(frame) < off + 4 + n:
        return None
    mask = frame[off:off + 4]
    data = bytes(c ^ mask[i % 4] for i, c in enumerate(frame[off + 4:off + 4 + n]))
    return b0 & 0x0F, data, frame[off + 4 + n:]


class CodecTest(unittest.TestCase):
    def test_client_frames_masked_roundtrip(self):
        for n in (0, 5, 125, 126, 65535, 65536, 70000):
            payload = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
            op, data, rest = _unmask(_ws._frame(0x1, payload))
            self.assertEqual((op, data, rest), (0x1, payload, b""), n)

    def test_reader_fragments_and_control_frames(self):
        r = _ws._Reader(1 << 20)
        stream = (_server_frame(0x1, "héllo ".encode(), fin=False) + _server_frame(0x9, b"p")
                  + _server_frame(0x0, "wörld".encode()) + _server_frame(0x8, struct.pack("!H", 1008) + b"idle"))
        events = []
        for i in range(len(stream)):  # byte by byte: partial frames wait
            r.feed(stream[i:i + 1])
            events += r.events()
        self.assertEqual(events, [("ping", b"p"), ("message", "héllo wörld"), ("close", (1008, "idle"))])

    def test_reader_many_frames_in_one_read(self):
        # Pongs and non-final fragments yield no event; 5000 of each in one
        # read must not exhaust Python's recursion limit (1000).
        r = _ws._Reader(1 << 20)
        r.feed(_server_frame(0xA, b"") * 5000 + _server_frame(0x1, b"a", fin=False)
               + _server_frame(0x0, b"b", fin=False) * 5000 + _server_frame(0x0, b"c"))
        self.assertEqual(r.events(), [("message", "a" + "b" * 5000 + "c")])

    def test_reader_rejects(self):
        for stream, why in [
            (bytes([0x81, 0x81, 1, 2, 3, 4, 5]), "masked"),
            (_server_frame(0x0, b"x"), "continuation"),
            (_server_frame(0x3, b"x"), "opcode"),
            (_server_frame(0x1, b"\xff"), "UTF-8"),
            (_server_frame(0x1, b"x" * 11), "over 10 bytes"),
        ]:
            r = _ws._Reader(10)
            r.feed(stream)
            with self.assertRaises(_ws.ProtocolError, msg=why):
                r.events()

    def test_handshake_accept(self):
        # RFC 6455 section 1.3's worked example.
        self.assertEqual(_ws._accept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        req, accept = _ws._handshake_request("127.0.0.1", 8000, "/ws")
        key = [ln.split(": ", 1)[1] for ln in req.decode().split("\r\n") if ln.startswith("Sec-WebSocket-Key")][0]
        self.assertEqual(accept, _ws._accept(key))
        self.assertTrue(req.startswith(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"))
        with self.assertRaises(_ws.HandshakeError):
            _ws._check_handshake(b"HTTP/1.1 101 Switching\r\nSec-WebSocket-Accept: wrong", "right")
        with self.assertRaises(_ws.HandshakeError):
            _ws._check_handshake(b"HTTP/1.1 404 Not Found", "x")


# A stand-in for `persuarena serve`: writes the listening line, then
# answers /health with 401 (as a server that wants a token would).
_UNHEALTHY_SERVE = """#!%s
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"detail": "token required", "code": "UNAUTHORIZED"}')
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
sys.stderr.write("persuarena serve: http://127.0.0.1:%%d (WebSocket)\\n" %% srv.server_port)
sys.stderr.flush()
srv.serve_forever()
"""


class LaunchCleanupTest(unittest.TestCase):
    def test_listen_addr(self):
        from persuarena._launch import _listen_addr
        self.assertEqual(_listen_addr("127.0.0.1"), "127.0.0.1:0")
        self.assertEqual(_listen_addr("localhost"), "localhost:0")
        self.assertEqual(_listen_addr("::1"), "[::1]:0")  # "::1:0" is "too many colons" to Go
        self.assertEqual(_listen_addr("[::1]"), "[::1]:0")

    def test_error_answer_from_health_kills_the_server(self):
        from persuarena import _launch
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "persuarena")
            with open(path, "w") as f:
                f.write(_UNHEALTHY_SERVE % sys.executable)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
            started = []
            real_popen = _launch.subprocess.Popen

            def popen(*a, **kw):
                started.append(real_popen(*a, **kw))
                return started[-1]

            _launch.subprocess.Popen = popen
            try:
                with self.assertRaises(ServerError) as cm:
                    _launch.launch(binary=path, ready_timeout_s=20)
            finally:
                _launch.subprocess.Popen = real_popen
            self.assertEqual(cm.exception.status, 401)
            (proc,) = started
            self.assertIsNotNone(proc.poll(), "launch() raised but left the server running")
            self.assertFalse([s for s in _launch._live if s.process is proc])


class _EchoServer:
    """A one-connection WebSocket server on loopback: answers the
    handshake, pings once, echoes each text message upper-cased, and
    answers a close frame with a close frame."""

    def __init__(self, silent=False):
        self.silent = silent
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = "ws://127.0.0.1:%d/ws" % self.sock.getsockname()[1]
        self.pongs = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.sock.accept()
        self.sock.close()
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += conn.recv(4096)
        key = [ln.split(b":", 1)[1].strip() for ln in buf.split(b"\r\n") if ln.lower().startswith(b"sec-websocket-key")][0]
        accept = base64.b64encode(hashlib.sha1(key + _ws._GUID).digest())
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n" + _server_frame(0x9, b"hb"))
        pending = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            pending += chunk
            while True:
                got = _unmask(pending)
                if got is None:
                    break
                op, data, pending = got
                if op == 0xA:
                    self.pongs.append(data)
                elif op == 0x1 and not self.silent:
                    conn.sendall(_server_frame(0x1, data.decode().upper().encode()))
                elif op == 0x8:
                    conn.sendall(_server_frame(0x8, data))
                    conn.close()
                    return
        conn.close()


class WebSocketTest(unittest.TestCase):
    def test_sync_echo_ping_close(self):
        srv = _EchoServer()
        ws = _ws.WebSocket.connect(srv.url, timeout=5)
        ws.send("hello")
        self.assertEqual(ws.recv(5), "HELLO")
        big = "x" * 70000
        ws.send(big)
        self.assertEqual(ws.recv(5), big.upper())
        ws.close()
        srv.thread.join(5)
        self.assertEqual(srv.pongs, [b"hb"])
        with self.assertRaises(ConnectionClosed):
            ws.send("after close")

    def test_async_echo(self):
        srv = _EchoServer()

        async def run():
            async with await _ws.connect_async(srv.url, open_timeout=5) as ws:
                await ws.send("async")
                return await asyncio.wait_for(ws.recv(), 5)

        self.assertEqual(asyncio.run(run()), "ASYNC")
        srv.thread.join(5)
        self.assertEqual(srv.pongs, [b"hb"])

    def test_late_reply_closes_the_session(self):
        # A reply later than message_timeout_s raises TimeoutError and the
        # client drops the connection, so that the late reply can never
        # answer a later request.
        srv = _EchoServer(silent=True)
        env = SyncPersuArenaEnv(srv.url, message_timeout_s=0.2)
        with self.assertRaises(TimeoutError):
            env.reset(seed=1)
        self.assertIsNone(env._ws)
        srv.thread.join(5)
        self.assertFalse(srv.thread.is_alive(), "the client must close the connection")

        srv = _EchoServer(silent=True)

        async def run():
            env = PersuArenaEnv(srv.url, message_timeout_s=0.2)
            with self.assertRaises(TimeoutError):
                await env.reset(seed=1)
            return env._ws

        self.assertIsNone(asyncio.run(run()))
        srv.thread.join(5)
        self.assertFalse(srv.thread.is_alive())


def _play(env):
    """Plays the docs/server.md example session on a sync client; returns
    the results."""
    out = [env.reset(**SCRIPT_RESET)]
    for line in SCRIPT_LINES:
        out.append(env.step(line))
    return out


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server_or_skip(cls, "--max-sessions", "4")

    @classmethod
    def tearDownClass(cls):
        from persuarena._launch import GRACEFUL_EXIT
        code = cls.srv.stop()
        if code != GRACEFUL_EXIT:
            raise AssertionError("the server must shut down gracefully on SIGTERM, exit status %d\n%s" % (code, cls.srv.log_tail()))

    def check_script_episode(self, rs):
        first, last = rs[0], rs[-1]
        self.assertEqual(first.observation.scenario.id, "arena-train-0029")
        self.assertIsNone(first.reward)
        self.assertEqual([r.observation.turn for r in rs], [0, 1, 2, 3, 4])
        # Same reset, same actions: the same beliefs on every transport
        # (the first episode played in this class is the reference).
        beliefs = [r.observation.belief for r in rs]
        self.assertTrue(all(0 <= b <= 1 for b in beliefs), beliefs)
        ref = type(self).__dict__.get("ref_beliefs")
        if ref is None:
            type(self).ref_beliefs = beliefs
        else:
            self.assertEqual(beliefs, ref)
        self.assertTrue(last.done and not any(r.done for r in rs[:-1]))
        self.assertEqual((last.observation.decision, last.observation.terminal, last.metadata["r_goal"]), ("accept", "accept", 3))
        # Mode both: the last reward is r_T + R_out with R_out = R_goal = 3.
        self.assertAlmostEqual(last.reward, last.observation.dense + 3, places=12)
        # The dense rewards telescope to B_T - B_0.
        dense = sum(r.observation.dense for r in rs[1:])
        self.assertAlmostEqual(dense, last.observation.belief - first.observation.belief, places=12)

    def test_sync_ws_episode(self):
        with self.srv.sync_client() as env:
            rs = _play(env)
            self.check_script_episode(rs)
            st = env.state()
            self.assertEqual((st.step_count, st.done, st.terminal, st.r_goal), (4, True, "accept", 3))
            self.assertEqual(len(st.beliefs), 5)
            with self.assertRaises(ServerError) as cm:
                env.step("Shall we go on?")
            self.assertEqual(cm.exception.code, "EXECUTION_ERROR")
            # The session survives an error: a new episode on it.
            self.assertEqual(env.reset(seed=1).observation.turn, 0)

    def test_async_ws_episode_and_sync(self):
        async def run():
            async with self.srv.client() as env:
                rs = [await env.reset(**SCRIPT_RESET)]
                for line in SCRIPT_LINES:
                    rs.append(await env.step(PersuArenaAction(line)))
                st = await env.state()
                meta = await env.metadata()
                return rs, st, meta

        rs, st, meta = asyncio.run(run())
        self.check_script_episode(rs)
        self.assertEqual(st.rewards[-1], rs[-1].reward)
        self.assertEqual(meta["name"], "persuarena")
        with PersuArenaEnv(self.srv.base_url).sync() as env:
            self.check_script_episode(_play(env))

    def test_http_episode(self):
        with HTTPPersuArenaEnv(self.srv.base_url) as env:
            self.assertEqual(env.health(), {"status": "healthy"})
            rs = _play(env)
            self.check_script_episode(rs)
            self.assertEqual(env.episode_id, rs[0].observation.episode_id)
            self.assertEqual(env.state().terminal, "accept")
            with self.assertRaises(ServerError) as cm:
                env.step("more")
            self.assertEqual((cm.exception.code, cm.exception.status), ("EXECUTION_ERROR", 409))
            with self.assertRaises(ServerError) as cm:
                env.reset(sead=1)
            self.assertEqual((cm.exception.code, cm.exception.status), ("VALIDATION_ERROR", 422))

    def test_one_version(self):
        # The package's version is the Go release the binary reports
        # (internal/buildinfo/VERSION; "RELEASE-devel-REV" for a checkout
        # build, "vRELEASE" for a tagged module build).
        import persuarena
        v = HTTPPersuArenaEnv(self.srv.base_url).metadata()["version"]
        self.assertRegex(persuarena.__version__, r"^\d+\.\d+\.\d+$")
        self.assertIn(v.lstrip("v").split("-")[0], (persuarena.__version__,), v)

    def test_from_binary_stops_its_server(self):
        # OpenEnv's from_docker_image pattern: the client owns the server
        # it launched and stops it on close.
        import persuarena._launch as pl
        before = set(pl._live)
        env = SyncPersuArenaEnv.from_binary("--tmax", "3")
        (srv,) = set(pl._live) - before
        r = env.reset(seed=4)
        self.assertEqual(r.observation.tmax, 3)
        env.close()
        self.assertFalse(srv.running())
        self.assertEqual(srv.process.returncode, pl.GRACEFUL_EXIT)  # 128 + SIGTERM, not -9

        async def run():
            env = await PersuArenaEnv.from_binary("--tmax", "2")
            r = await env.reset(seed=4)
            await env.close()
            return r.observation.tmax

        self.assertEqual(asyncio.run(run()), 2)
        self.assertEqual(set(pl._live), before)

    def test_launch_error(self):
        # A server that exits before listening: LaunchError with its stderr.
        from persuarena.client import LaunchError, launch
        with self.assertRaises(LaunchError) as cm:
            launch("--reward", "everything")
        self.assertIn("exited with status 1 before listening", str(cm.exception))
        self.assertIn("everything", str(cm.exception))

    def test_validation_error_ws(self):
        with SyncPersuArenaEnv(self.srv.ws_url) as env:
            with self.assertRaises(ServerError) as cm:
                env.step("before any reset")
            self.assertEqual(cm.exception.code, "VALIDATION_ERROR")

    def test_capacity(self):
        # --max-sessions 4: four open sessions, the fifth is refused with
        # CAPACITY_REACHED and close code 1013.
        envs = [SyncPersuArenaEnv(self.srv.base_url).connect() for _ in range(4)]
        try:
            for e in envs:
                e.reset(seed=3)
            extra = SyncPersuArenaEnv(self.srv.base_url)
            with self.assertRaises(ServerError) as cm:
                extra.reset(seed=3)
            self.assertEqual(cm.exception.code, "CAPACITY_REACHED")
            with self.assertRaises(ConnectionClosed) as cc:
                extra._ws.recv(5)
            self.assertEqual(cc.exception.code, 1013)
            # Still full: the client's next request reconnects and is refused again.
            with self.assertRaises(ServerError) as cm:
                extra.reset(seed=3)
            self.assertEqual(cm.exception.code, "CAPACITY_REACHED")
            extra.close()
        finally:
            for e in envs:
                e.close()
        # Closed sessions free their slots.
        with self.srv.sync_client() as env:
            self.assertEqual(env.reset(seed=3).observation.turn, 0)


if __name__ == "__main__":
    unittest.main()


class IdleCloseTest(unittest.TestCase):
    """After the server closes an idle session (SESSION_ERROR, close 1008),
    the next request goes through on a new session: one call, not three
    (the idle goodbye, then the closed socket, then the reconnect)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = server_or_skip(cls, "--idle-timeout", "1s")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def test_sync(self):
        with self.srv.sync_client() as env:
            env.reset(**SCRIPT_RESET)
            time.sleep(2.5)
            r = env.reset(**SCRIPT_RESET)
            self.assertEqual(r.observation.turn, 0)

    def test_async(self):
        async def run():
            async with self.srv.client() as env:
                await env.reset(**SCRIPT_RESET)
                await asyncio.sleep(2.5)
                r = await env.reset(**SCRIPT_RESET)
                self.assertEqual(r.observation.turn, 0)
        asyncio.run(run())
