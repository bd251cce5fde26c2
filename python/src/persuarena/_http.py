"""JSON over HTTP with urllib: one home for the requests the client and
launch() send, and for turning the server's error bodies into
:class:`ServerError`."""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

__all__ = ["ServerError", "request_json", "get_json"]


class ServerError(RuntimeError):
    """The server answered with an error.

    ``code`` is its OpenEnv error code (VALIDATION_ERROR, EXECUTION_ERROR,
    CAPACITY_REACHED, SESSION_ERROR, INVALID_JSON, UNKNOWN_TYPE;
    docs/server.md, Errors), ``message`` its text, ``status`` the HTTP
    status (None over WebSocket). A RuntimeError, as OpenEnv's EnvClient
    raises for an error message."""

    def __init__(self, code: str, message: str, status: Optional[int] = None):
        super().__init__("%s: %s" % (code, message) if status is None else "%s (HTTP %d): %s" % (code, status, message))
        self.code = code
        self.message = message
        self.status = status


_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_default = urllib.request.build_opener()


def _opener(url: str) -> urllib.request.OpenerDirector:
    # A loopback server is never reached through an HTTP proxy (OpenEnv's
    # EnvClient.connect sets NO_PROXY for localhost alike).
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        loop = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loop = False
    return _direct if loop else _default


def request_json(method: str, url: str, body: Any = None, timeout: Optional[float] = 60.0) -> Any:
    """Sends ``body`` (JSON-encoded when not None) with ``method`` and
    returns the decoded JSON answer. Raises ServerError for an error
    status (with the body's code and detail when it has them), OSError
    (urllib.error.URLError) when the server cannot be reached, ValueError
    when a success answer is not JSON."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with _opener(url).open(req, timeout=timeout) as r:
            raw = r.read()
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            err = json.loads(raw)
        except ValueError:
            err = None
        if isinstance(err, dict) and "detail" in err:
            raise ServerError(str(err.get("code", "HTTP_ERROR")), str(err["detail"]), e.code) from None
        raise ServerError("HTTP_ERROR", raw.decode("utf-8", "replace")[:500] or e.reason, e.code) from None
    return json.loads(raw)


def get_json(url: str, timeout: Optional[float] = 60.0) -> Any:
    """``request_json("GET", url)``."""
    return request_json("GET", url, None, timeout)
