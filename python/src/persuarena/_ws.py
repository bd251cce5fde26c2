"""A small RFC 6455 WebSocket client, standard library only.

It speaks exactly what ``persuarena serve``'s ``/ws`` channel needs: text
messages in both directions, fragmented messages, ping/pong and the close
handshake, over ``ws://`` or ``wss://``. Client frames are masked (RFC 6455
section 5.3); server frames must not be (section 5.1). The framing is
sans-IO (:class:`_Reader`, :func:`_frame`), shared by the blocking
:class:`WebSocket` and the asyncio :class:`AsyncWebSocket`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import select
import socket
import ssl
import struct
import urllib.parse
from typing import List, Optional, Tuple

__all__ = ["WebSocket", "AsyncWebSocket", "ConnectionClosed", "HandshakeError", "ProtocolError",
           "connect", "connect_async"]

# RFC 6455 section 1.3: the key-accept GUID.
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

_CONT, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

#: Default bound on one received message, in bytes (OpenEnv's client
#: default, max_message_size_mb = 100).
DEFAULT_MAX_SIZE = 100 * 1024 * 1024


class ConnectionClosed(ConnectionError):
    """The connection ended: the peer sent a close frame (``code`` is its
    status code, e.g. 1000 normal, 1008 idle timeout, 1013 try again
    later; ``reason`` its text) or the socket closed without one (``code``
    1006, RFC 6455 section 7.1.5)."""

    def __init__(self, code: int, reason: str = ""):
        super().__init__("WebSocket closed with code %d%s" % (code, ": " + reason if reason else ""))
        self.code = code
        self.reason = reason


class HandshakeError(ConnectionError):
    """The server refused the opening handshake or answered it wrongly."""


class ProtocolError(ConnectionError):
    """The server broke RFC 6455 framing (a masked frame, a bad opcode, a
    message over the size limit, invalid UTF-8 in a text message)."""


def _split_url(url: str) -> Tuple[str, int, str, bool]:
    """Returns (host, port, request target, tls) of a ws:// or wss:// URL.
    Raises ValueError for other schemes."""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("ws", "wss"):
        raise ValueError("WebSocket URL %r: scheme must be ws or wss" % url)
    if not u.hostname:
        raise ValueError("WebSocket URL %r has no host" % url)
    tls = u.scheme == "wss"
    port = u.port or (443 if tls else 80)
    target = u.path or "/"
    if u.query:
        target += "?" + u.query
    return u.hostname, port, target, tls


def _handshake_request(host: str, port: int, target: str) -> Tuple[bytes, str]:
    """Returns the opening handshake (RFC 6455 section 4.1) and the
    Sec-WebSocket-Accept value the server must answer with."""
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    hostport = host if ":" not in host else "[%s]" % host
    req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n") % (target, hostport, port, key)
    return req.encode("ascii"), _accept(key)


def _accept(key: str) -> str:
    """The Sec-WebSocket-Accept answer to ``key`` (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _GUID).digest()).decode("ascii")


def _check_handshake(head: bytes, accept: str) -> None:
    """Checks the server's handshake response head (without the blank
    line). Raises HandshakeError when it is not 101 with the right
    Sec-WebSocket-Accept."""
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or status[1] != "101":
        raise HandshakeError("WebSocket handshake refused: %s" % lines[0])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("sec-websocket-accept") != accept:
        raise HandshakeError("WebSocket handshake: wrong Sec-WebSocket-Accept %r" % headers.get("sec-websocket-accept"))


def _frame(opcode: int, payload: bytes) -> bytes:
    """One final, masked client frame (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    mask = os.urandom(4)
    # XOR by whole-buffer integer arithmetic: linear, no per-byte Python loop.
    m = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big") if n else b""
    return head + mask + masked


def _close_payload(code: int, reason: str) -> bytes:
    return struct.pack("!H", code) + reason.encode("utf-8")[:123]


class _Reader:
    """Sans-IO frame parser: feed it bytes, take complete events.

    ``events()`` returns ("message", str|bytes), ("ping", bytes) and
    ("close", (code, reason)) in arrival order; control frames may arrive
    between the fragments of a message (RFC 6455 section 5.4)."""

    def __init__(self, max_size: int):
        self._buf = bytearray()
        self._max = max_size
        self._parts: List[bytes] = []
        self._size = 0
        self._opcode: Optional[int] = None

    def feed(self, data: bytes) -> None:
        self._buf += data

    def events(self) -> List[tuple]:
        out: List[tuple] = []
        while True:
            ev = self._next()
            if ev is None:
                return out
            out.append(ev)

    def _next(self) -> Optional[tuple]:
        # A loop, not recursion: pongs and non-final fragments produce no
        # event, and a server may send thousands of them in one read.
        while True:
            b = self._buf
            if len(b) < 2:
                return None
            fin, opcode, masked, n = b[0] & 0x80, b[0] & 0x0F, b[1] & 0x80, b[1] & 0x7F
            if b[0] & 0x70:
                raise ProtocolError("frame with reserved bits set (no extension was negotiated)")
            if masked:
                raise ProtocolError("the server sent a masked frame (RFC 6455 section 5.1)")
            off = 2
            if n == 126:
                if len(b) < 4:
                    return None
                n, off = struct.unpack_from("!H", b, 2)[0], 4
            elif n == 127:
                if len(b) < 10:
                    return None
                n, off = struct.unpack_from("!Q", b, 2)[0], 10
            if opcode >= 0x8 and (n > 125 or not fin):
                raise ProtocolError("control frame over 125 bytes or fragmented")
            if opcode < 0x8 and self._size + n > self._max:
                raise ProtocolError("message over %d bytes" % self._max)
            if len(b) < off + n:
                return None
            payload = bytes(b[off:off + n])
            del b[:off + n]
            if opcode == _PING:
                return ("ping", payload)
            if opcode == _PONG:
                continue
            if opcode == _CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                return ("close", (code, payload[2:].decode("utf-8", "replace")))
            if opcode in (_TEXT, _BINARY):
                if self._opcode is not None:
                    raise ProtocolError("new message before the previous one's last fragment")
                self._opcode = opcode
            elif opcode == _CONT:
                if self._opcode is None:
                    raise ProtocolError("continuation frame without a message")
            else:
                raise ProtocolError("unknown opcode 0x%x" % opcode)
            self._parts.append(payload)
            self._size += n
            if not fin:
                continue
            data, kind = b"".join(self._parts), self._opcode
            self._parts, self._size, self._opcode = [], 0, None
            if kind == _TEXT:
                try:
                    return ("message", data.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise ProtocolError("text message is not UTF-8: %s" % exc) from None
            return ("message", data)


def _spent(pending: List[tuple], pong) -> bool:
    """Answers the pings among pending (unread events) with pong and
    reports whether any other event is left: a message or a close the
    server sent unasked."""
    others = [ev for ev in pending if ev[0] != "ping"]
    for kind, val in pending:
        if kind == "ping":
            pong(val)
    pending[:] = others
    return bool(others)


class WebSocket:
    """A blocking WebSocket connection. Open one with :meth:`connect`.

    Not safe for concurrent use from several threads: one request and its
    reply at a time, as the ``/ws`` protocol is used."""

    def __init__(self, sock: socket.socket, reader: _Reader):
        self._sock = sock
        self._reader = reader
        self._pending: List[tuple] = []
        self.closed: Optional[ConnectionClosed] = None

    @classmethod
    def connect(cls, url: str, timeout: float = 10.0, max_size: int = DEFAULT_MAX_SIZE) -> "WebSocket":
        """Opens ``url`` (ws:// or wss://) and performs the opening
        handshake within ``timeout`` seconds. ``max_size`` bounds one
        received message in bytes. Raises ValueError for a bad URL,
        OSError (ConnectionRefusedError, socket.timeout) when the server
        cannot be reached, HandshakeError when it refuses the upgrade."""
        host, port, target, tls = _split_url(url)
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            if tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            req, accept = _handshake_request(host, port, target)
            sock.sendall(req)
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = sock.recv(4096)
                if not chunk:
                    raise HandshakeError("WebSocket handshake: the server closed the connection")
                buf += chunk
                if len(buf) > 65536:
                    raise HandshakeError("WebSocket handshake: response head over 64 KiB")
            head, rest = buf.split(b"\r\n\r\n", 1)
            _check_handshake(head, accept)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        reader = _Reader(max_size)
        reader.feed(rest)
        return cls(sock, reader)

    def send(self, text: str) -> None:
        """Sends one text message. Raises ConnectionClosed after a close,
        OSError when the socket fails."""
        if self.closed is not None:
            raise self.closed
        self._sock.sendall(_frame(_TEXT, text.encode("utf-8")))

    def recv(self, timeout: Optional[float] = None) -> str:
        """Returns the next message (str for text, bytes for binary),
        answering pings on the way. Waits at most ``timeout`` seconds
        (None: no limit); raises TimeoutError when none came (the
        connection stays usable), ConnectionClosed when the server closed
        it (after answering its close frame), ProtocolError on bad framing."""
        if self.closed is not None:
            raise self.closed
        self._sock.settimeout(timeout)
        try:
            while True:
                while self._pending:
                    kind, val = self._pending.pop(0)
                    if kind == "message":
                        return val
                    if kind == "ping":
                        self._sock.sendall(_frame(_PONG, val))
                    elif kind == "close":
                        self._closed_by_peer(*val)
                try:
                    chunk = self._sock.recv(65536)
                except socket.timeout:
                    raise TimeoutError("no WebSocket message within %s s" % timeout) from None
                if not chunk:
                    self.closed = ConnectionClosed(1006, "connection dropped without a close frame")
                    self._sock.close()
                    raise self.closed
                self._reader.feed(chunk)
                self._pending.extend(self._reader.events())
        finally:
            if self.closed is None:
                self._sock.settimeout(None)

    def unprompted(self) -> bool:
        """Reads, without blocking, what the server sent since the last
        reply and reports whether it ended the session: a message, a close
        frame or the end of the connection, unasked for, is the server's
        goodbye in this request-reply protocol (an idle timeout's
        SESSION_ERROR, a shutdown), so the connection is spent. Pings are
        answered on the way."""
        if self.closed is not None:
            return True
        while True:
            tls_pending = getattr(self._sock, "pending", None)
            if not (tls_pending is not None and tls_pending() > 0) and not select.select([self._sock], [], [], 0)[0]:
                break
            try:
                chunk = self._sock.recv(65536)
            except OSError:
                return True
            if not chunk:
                return True
            self._reader.feed(chunk)
            self._pending.extend(self._reader.events())
        return _spent(self._pending, lambda val: self._sock.sendall(_frame(_PONG, val)))

    def _closed_by_peer(self, code: int, reason: str) -> None:
        self.closed = ConnectionClosed(code, reason)
        try:
            self._sock.sendall(_frame(_CLOSE, _close_payload(code if code != 1005 else 1000, "")))
        except OSError:
            pass
        self._sock.close()
        raise self.closed

    def close(self, code: int = 1000, reason: str = "", timeout: float = 2.0) -> None:
        """Starts the close handshake with ``code`` and waits up to
        ``timeout`` seconds for the server's close frame, then closes the
        socket. Never raises; closing twice does nothing."""
        if self.closed is not None:
            return
        self.closed = ConnectionClosed(code, reason)
        try:
            self._sock.sendall(_frame(_CLOSE, _close_payload(code, reason)))
            self._sock.settimeout(timeout)
            while not any(k == "close" for k, _ in self._pending):
                chunk = self._sock.recv(65536)
                if not chunk:
                    break
                self._reader.feed(chunk)
                self._pending.extend(self._reader.events())
        except (OSError, ProtocolError):
            pass
        finally:
            self._sock.close()

    def __enter__(self) -> "WebSocket":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncWebSocket:
    """An asyncio WebSocket connection. Open one with :meth:`connect`; the
    same rules as :class:`WebSocket` (one request and reply at a time)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frames: _Reader):
        self._r = reader
        self._w = writer
        self._frames = frames
        self._pending: List[tuple] = []
        self.closed: Optional[ConnectionClosed] = None

    @classmethod
    async def connect(cls, url: str, timeout: float = 10.0, max_size: int = DEFAULT_MAX_SIZE) -> "AsyncWebSocket":
        """As :meth:`WebSocket.connect`; a slow server raises
        asyncio.TimeoutError (a TimeoutError subclass from Python 3.11)."""
        host, port, target, tls = _split_url(url)

        async def opening():
            r, w = await asyncio.open_connection(host, port, ssl=ssl.create_default_context() if tls else None)
            try:
                req, accept = _handshake_request(host, port, target)
                w.write(req)
                await w.drain()
                try:
                    head = await r.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    raise HandshakeError("WebSocket handshake: the server closed the connection") from None
                except asyncio.LimitOverrunError:
                    raise HandshakeError("WebSocket handshake: response head over 64 KiB") from None
                _check_handshake(head[:-4], accept)
            except BaseException:
                w.close()
                raise
            return r, w

        r, w = await asyncio.wait_for(opening(), timeout)
        return cls(r, w, _Reader(max_size))

    async def send(self, text: str) -> None:
        """As :meth:`WebSocket.send`."""
        if self.closed is not None:
            raise self.closed
        self._w.write(_frame(_TEXT, text.encode("utf-8")))
        await self._w.drain()

    async def recv(self) -> str:
        """As :meth:`WebSocket.recv` without a timeout: wrap it in
        asyncio.wait_for to bound the wait (cancelling it loses no data:
        bytes already read stay in the parser)."""
        if self.closed is not None:
            raise self.closed
        while True:
            while self._pending:
                kind, val = self._pending.pop(0)
                if kind == "message":
                    return val
                if kind == "ping":
                    self._w.write(_frame(_PONG, val))
                elif kind == "close":
                    code, reason = val
                    self.closed = ConnectionClosed(code, reason)
                    try:
                        self._w.write(_frame(_CLOSE, _close_payload(code if code != 1005 else 1000, "")))
                        self._w.close()
                    except OSError:
                        pass
                    raise self.closed
            chunk = await self._r.read(65536)
            if not chunk:
                self.closed = ConnectionClosed(1006, "connection dropped without a close frame")
                self._w.close()
                raise self.closed
            self._frames.feed(chunk)
            self._pending.extend(self._frames.events())

    async def unprompted(self) -> bool:
        """As :meth:`WebSocket.unprompted`: it lets the event loop take in
        what has arrived and reads it without waiting for more."""
        if self.closed is not None:
            return True
        await asyncio.sleep(0)
        while True:
            read = asyncio.ensure_future(self._r.read(65536))
            await asyncio.sleep(0)
            if not read.done():
                read.cancel()  # nothing was taken from the stream
                try:
                    await read
                except asyncio.CancelledError:
                    pass
                break
            try:
                chunk = read.result()
            except OSError:
                return True
            if not chunk:
                return True
            self._frames.feed(chunk)
            self._pending.extend(self._frames.events())
        return _spent(self._pending, lambda val: self._w.write(_frame(_PONG, val)))

    async def close(self, code: int = 1000, reason: str = "", timeout: float = 2.0) -> None:
        """As :meth:`WebSocket.close`."""
        if self.closed is not None:
            return
        self.closed = ConnectionClosed(code, reason)
        try:
            self._w.write(_frame(_CLOSE, _close_payload(code, reason)))
            await self._w.drain()

            async def drain_until_close():
                while not any(k == "close" for k, _ in self._pending):
                    chunk = await self._r.read(65536)
                    if not chunk:
                        return
                    self._frames.feed(chunk)
                    self._pending.extend(self._frames.events())

            await asyncio.wait_for(drain_until_close(), timeout)
        except (OSError, ProtocolError, asyncio.TimeoutError):
            pass
        finally:
            self._w.close()

    async def __aenter__(self) -> "AsyncWebSocket":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


def connect(url: str, open_timeout: float = 10.0, max_size: int = DEFAULT_MAX_SIZE) -> WebSocket:
    """:meth:`WebSocket.connect` with the keyword names of the websockets
    package's ``websockets.sync.client.connect`` (open_timeout, max_size),
    so code written for one runs on the other; the result is a context
    manager, with ``send(str)``, ``recv(timeout)`` and ``close()``."""
    return WebSocket.connect(url, open_timeout, max_size)


async def connect_async(url: str, open_timeout: float = 10.0, max_size: int = DEFAULT_MAX_SIZE) -> AsyncWebSocket:
    """:meth:`AsyncWebSocket.connect` with the keyword names of
    ``websockets.asyncio.client.connect``; the result is an async context
    manager, with ``send``, ``recv`` and ``close`` coroutines."""
    return await AsyncWebSocket.connect(url, open_timeout, max_size)
