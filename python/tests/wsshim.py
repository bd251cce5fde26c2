"""A minimal RFC 6455 WebSocket client for the tests (standard library only).

When the ``websockets`` package is not installed, ``install()`` registers
this client under its module names (websockets.sync.client.connect,
websockets.asyncio.client.connect), so the adapters' own code paths run
unchanged against the in-process ``persuarena serve``.
"""

import asyncio
import base64
import os
import socket
import struct
import sys
import types
import urllib.parse


class _Closed(Exception):
    pass


class _SyncWS:
    def __init__(self, url, open_timeout=10, max_size=None):
        u = urllib.parse.urlsplit(url)
        self._sock = socket.create_connection((u.hostname, u.port or 80), timeout=open_timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n") % (u.path or "/", u.hostname, u.port or 80, key)
        self._sock.sendall(req.encode())
        self._buf = b""
        while b"\r\n\r\n" not in self._buf:
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("handshake: connection closed")
            self._buf += chunk
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError("handshake refused: %r" % head[:80])
        self._sock.settimeout(None)

    def _read(self, n):
        while len(self._buf) < n:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise _Closed("connection closed")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _frame(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        self._sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, text):
        self._frame(0x1, text.encode("utf-8"))

    def recv(self, timeout=None):
        self._sock.settimeout(timeout)
        try:
            data = b""
            while True:
                b0, b1 = self._read(2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", self._read(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._read(8))[0]
                payload = self._read(n)
                opcode = b0 & 0x0F
                if opcode == 0x8:
                    raise _Closed("closed by the server: %r" % payload[2:])
                if opcode == 0x9:
                    self._frame(0xA, payload)
                    continue
                if opcode in (0x1, 0x0):
                    data += payload
                    if b0 & 0x80:
                        return data.decode("utf-8")
        except socket.timeout:
            raise TimeoutError("no message within %s s" % timeout)
        finally:
            try:
                self._sock.settimeout(None)
            except OSError:
                pass

    def close(self):
        try:
            self._frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


class _AsyncWS:
    def __init__(self, sync):
        self._s = sync

    async def send(self, text):
        await asyncio.to_thread(self._s.send, text)

    async def recv(self):
        return await asyncio.to_thread(self._s.recv, None)

    async def close(self):
        await asyncio.to_thread(self._s.close)


class _Connect:
    """What websockets.asyncio.client.connect returns: awaitable, and an
    async context manager."""

    def __init__(self, url):
        self._url = url
        self._ws = None

    async def _open(self):
        self._ws = _AsyncWS(await asyncio.to_thread(_SyncWS, self._url))
        return self._ws

    def __await__(self):
        return self._open().__await__()

    async def __aenter__(self):
        return await self._open()

    async def __aexit__(self, *exc):
        await self._ws.close()


def _async_connect(url, max_size=None):
    return _Connect(url)


def install():
    """Registers the shim unless websockets is importable; True when it did."""
    try:
        import websockets.sync.client  # noqa: F401
        import websockets.asyncio.client  # noqa: F401
        return False
    except ImportError:
        pass
    names = ["websockets", "websockets.sync", "websockets.sync.client", "websockets.asyncio", "websockets.asyncio.client"]
    mods = {n: types.ModuleType(n) for n in names}
    mods["websockets.sync.client"].connect = _SyncWS
    mods["websockets.asyncio.client"].connect = _async_connect
    mods["websockets"].sync = mods["websockets.sync"]
    mods["websockets"].asyncio = mods["websockets.asyncio"]
    mods["websockets.sync"].client = mods["websockets.sync.client"]
    mods["websockets.asyncio"].client = mods["websockets.asyncio.client"]
    sys.modules.update(mods)
    return True
