"""An OpenEnv-style client for ``persuarena serve``, standard library only.

The client is the persuader: each step's action is one utterance; the
observation is the persuadee's visible reply, the turn, the decision and
(at reset) the public scenario; the reward is the dense probe reward
r_t = B_t - B_{t-1}, the outcome reward R_out, or both (Probe-RPO paper;
docs/server.md gives the protocol).

Shapes follow OpenEnv's typed clients (huggingface/OpenEnv 385de5e,
``src/openenv/core/env_client.py``: ``reset(**kwargs)``, ``step(action)``,
``state()``, ``close()``, async with ``.sync()``; ``client_types.py``:
``StepResult``). ``StepResult.metadata`` is the field OpenEnv adds in
refs/pull/617 at 802c39dae116 (``client_types.py:25``), read as its typed
clients do: ``payload.get("metadata", obs.get("metadata", {}))``, so the
top-level copy wins and the nested ``observation.metadata`` is the
fallback.

Clients:

- :class:`PersuArenaEnv`: async, over the WebSocket ``/ws`` (one
  connection is one session); ``.sync()`` gives :class:`SyncPersuArenaEnv`.
- :class:`HTTPPersuArenaEnv` / :class:`AsyncHTTPPersuArenaEnv`: over
  ``POST /reset``, ``/step``, ``GET /state``, ``POST /close``, keeping the
  episode id /reset returned.
- :func:`launch`: starts the bundled ``persuarena serve`` on a free
  loopback port and stops it.

Example::

    from persuarena.client import launch
    with launch() as srv, srv.sync_client() as env:
        r = env.reset(seed=7)
        while not r.done:
            r = env.step("What worries you most about this?")
        print(r.observation.metadata["terminal"], r.reward)
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, TypeVar, Union

from ._bin import BinaryNotFound
from ._http import ServerError, get_json, request_json
from . import _launch
from ._launch import LaunchError
from ._ws import DEFAULT_MAX_SIZE, AsyncWebSocket, ConnectionClosed, WebSocket

__all__ = [
    "Party", "PublicScenario", "PersuArenaAction", "PersuArenaObservation", "PersuArenaState", "StepResult",
    "PersuArenaEnv", "SyncPersuArenaEnv", "HTTPPersuArenaEnv", "AsyncHTTPPersuArenaEnv",
    "PersuarenaEnv", "ServerError", "MCPError", "ConnectionClosed", "LaunchError", "BinaryNotFound", "Server", "launch",
    "parse_result", "parse_state",
]

ObsT = TypeVar("ObsT")

#: Decisions an observation can carry (server/schema.json).
DECISIONS = ("continue", "accept", "conditional", "reject", "pending", "truncated")


def _known(cls, d: Dict[str, Any]) -> Dict[str, Any]:
    # Fields this version knows; a newer server's extra fields are ignored.
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in d.items() if k in names}


@dataclass
class Party:
    """One side of a scenario: ``role`` (e.g. "adult child") and ``name``
    ("" when the scenario has none)."""

    role: str
    name: str = ""


@dataclass
class PublicScenario:
    """The public scenario a reset returns (the Go ``scenario.Public``):
    everything but the persuadee's hidden profile and the real outcome.
    ``family`` is one of the six domains of server/schema.json,
    ``closeness`` one of intimate, close, acquainted, professional,
    strangers."""

    id: str
    domain: str
    family: str
    proposal: str
    accept_means: str
    conditional_means: str
    persuader: Party
    persuadee: Party
    relationship: str
    closeness: str
    background: str

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "PublicScenario":
        kw = _known(cls, d)
        kw["persuader"] = Party(**_known(Party, d["persuader"]))
        kw["persuadee"] = Party(**_known(Party, d["persuadee"]))
        return cls(**kw)

    def brief(self, tmax: int) -> str:
        """The scenario as the persuader's opening brief: who is talking to
        whom, the proposal, what acceptance means, the background, the turn
        limit, and the honesty norm. Public fields only (the hidden profile
        never leaves the server)."""

        def party(p: Party) -> str:
            return "%s (%s)" % (p.name, p.role) if p.name else p.role

        return "\n".join([
            "You are %s. You are talking with %s." % (party(self.persuader), party(self.persuadee)),
            "Relationship: %s (%s)." % (self.relationship, self.closeness),
            "Domain: %s (%s)." % (self.domain, self.family),
            "Your proposal: %s" % self.proposal,
            "Full acceptance means: %s" % self.accept_means,
            "Conditional acceptance means: %s" % self.conditional_means,
            "Background: %s" % self.background,
            "You have at most %d turns, one message each. Persuade honestly and respectfully: "
            "no deception, no pressure; the choice is theirs." % tmax,
        ])


@dataclass
class PersuArenaAction:
    """One persuader utterance (server/schema.json, PersuArenaAction):
    ``message`` is 1 to ``limits.max_message_bytes`` bytes of UTF-8, not
    blank; ``metadata`` is ignored by the server (OpenEnv's
    Action.metadata)."""

    message: str
    metadata: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """The wire form: {"message": ...} (plus "metadata" when set)."""
        d: Dict[str, Any] = {"message": self.message}
        if self.metadata:
            d["metadata"] = self.metadata
        return d


@dataclass
class PersuArenaObservation:
    """What a reset or step returns (server/schema.json,
    PersuArenaObservation).

    ``reply`` is the persuadee's visible reply ("" after a reset); ``turn``
    the persuader turns so far (0 after a reset, 1..tmax); ``decision``
    one of :data:`DECISIONS`; ``scenario`` the public scenario (reset only,
    None after a step); ``done`` and ``reward`` repeat the StepResult's;
    ``metadata`` is for the trainer, not the persuader's prompt:
    episode_id, reward_mode, acts, belief (B_t in [0, 1] or None), dense
    (r_t in [-1, 1] or None), reward_missing, terminal ("" until done), and
    at the last step r_goal, r_out (and r_strategy with a judge)."""

    reply: str
    turn: int
    tmax: int
    decision: str
    scenario: Optional[PublicScenario] = None
    done: bool = False
    reward: Optional[float] = None
    metadata: Dict[str, Any] = field(default_factory=dict)

    @property
    def episode_id(self) -> str:
        """metadata["episode_id"] ("" when absent)."""
        return self.metadata.get("episode_id", "")

    @property
    def belief(self) -> Optional[float]:
        """B_t, the persuadee's probed belief in [0, 1] (Probe-RPO
        paper); None when unreadable."""
        return self.metadata.get("belief")

    @property
    def dense(self) -> Optional[float]:
        """r_t = B_t - B_{t-1}; None after a reset or when a belief is
        missing."""
        return self.metadata.get("dense")

    @property
    def terminal(self) -> str:
        """The terminal state once done (accept, conditional, pending,
        reject, truncated, failed); "" before."""
        return self.metadata.get("terminal", "")


@dataclass
class PersuArenaState:
    """Episode bookkeeping (server/schema.json, PersuArenaState; OpenEnv's
    State fields episode_id and step_count first). ``beliefs`` are
    B_0..B_t (None where unreadable), ``rewards`` the step rewards so far,
    ``r_goal`` R_goal once done (None before). No hidden profile data."""

    episode_id: str
    step_count: int
    scenario_id: str = ""
    set: str = ""
    split: str = ""
    seed: int = 0
    rollout: int = 0
    persuadee: str = ""
    reward_mode: str = ""
    tmax: int = 0
    done: bool = False
    terminal: str = ""
    beliefs: List[Optional[float]] = field(default_factory=list)
    rewards: List[float] = field(default_factory=list)
    r_goal: Optional[float] = None


@dataclass
class StepResult(Generic[ObsT]):
    """OpenEnv's StepResult (client_types.py at 802c39dae116):
    ``observation``, ``reward`` (None after a reset), ``done``, and
    ``metadata``, the response's top-level metadata or else the
    observation's (the same dict as ``observation.metadata``)."""

    observation: ObsT
    reward: Optional[float] = None
    done: bool = False
    metadata: Optional[Dict[str, Any]] = None


def parse_result(payload: Dict[str, Any]) -> StepResult[PersuArenaObservation]:
    """Turns a reset/step response body ({"observation", "reward", "done"},
    optionally a top-level "metadata") into a StepResult. Raises KeyError
    or TypeError for a body that is not one."""
    obs = payload.get("observation", {})
    meta = payload.get("metadata", obs.get("metadata", {}))
    if meta is None:
        meta = {}
    sc = obs.get("scenario")
    o = PersuArenaObservation(
        reply=obs["reply"], turn=obs["turn"], tmax=obs["tmax"], decision=obs["decision"],
        scenario=PublicScenario.from_dict(sc) if sc else None,
        done=payload.get("done", False), reward=payload.get("reward"), metadata=meta)
    return StepResult(observation=o, reward=payload.get("reward"), done=payload.get("done", False), metadata=meta)


def parse_state(payload: Dict[str, Any]) -> PersuArenaState:
    """Turns a state body into a PersuArenaState (unknown fields ignored)."""
    return PersuArenaState(**_known(PersuArenaState, payload))


ActionLike = Union[PersuArenaAction, str, Dict[str, Any]]


def _action_payload(action: ActionLike) -> Dict[str, Any]:
    if isinstance(action, PersuArenaAction):
        return action.to_dict()
    if isinstance(action, str):
        return {"message": action}
    if isinstance(action, dict):
        return action
    raise TypeError("action must be a PersuArenaAction, a str or a dict, not %s" % type(action).__name__)


def _urls(base_url: str) -> tuple:
    """(http base, ws url) of a server given as http(s):// or ws(s)://,
    with or without a trailing /ws."""
    u = urllib.parse.urlsplit(base_url.rstrip("/"))
    if u.scheme not in ("http", "https", "ws", "wss"):
        raise ValueError("server URL %r: scheme must be http, https, ws or wss" % base_url)
    path = u.path[:-3] if u.path.endswith("/ws") else u.path
    tls = u.scheme in ("https", "wss")
    http = urllib.parse.urlunsplit(("https" if tls else "http", u.netloc, path, "", ""))
    ws = urllib.parse.urlunsplit(("wss" if tls else "ws", u.netloc, path + "/ws", "", ""))
    return http, ws


def _reply(raw: str) -> Dict[str, Any]:
    msg = json.loads(raw)
    if msg.get("type") == "error":
        d = msg.get("data") or {}
        raise ServerError(d.get("code", "UNKNOWN"), d.get("message", "unknown error"))
    return msg


class MCPError(RuntimeError):
    """A JSON-RPC error answer from /mcp: ``code`` is the JSON-RPC code
    (-32700 parse error, -32600 invalid request, -32601 method not found,
    -32602 invalid params, e.g. an unknown tool)."""

    def __init__(self, code: int, message: str):
        super().__init__("JSON-RPC error %d: %s" % (code, message))
        self.code = code
        self.message = message


def _rpc_result(resp: Dict[str, Any]) -> Any:
    if resp.get("error") is not None:
        e = resp["error"]
        raise MCPError(e.get("code", 0), e.get("message", ""))
    return resp.get("result")


def _tool_result(resp: Dict[str, Any]) -> Dict[str, Any]:
    """A tools/call result's structuredContent; a tool error (isError)
    raises ServerError with its OpenEnv code."""
    res = _rpc_result(resp)
    sc = res.get("structuredContent") or {}
    if res.get("isError"):
        text = "".join(c.get("text", "") for c in res.get("content", []))
        raise ServerError(sc.get("code", "TOOL_ERROR"), sc.get("message", text))
    return sc


class _Base:
    """What every client shares: URLs, timeouts, the GET endpoints."""

    def __init__(self, base_url: str, connect_timeout_s: float, message_timeout_s: float,
                 max_message_size_mb: float, provider: Any):
        self.base_url, self.ws_url = _urls(base_url)
        self._connect_timeout = connect_timeout_s
        self._message_timeout = message_timeout_s
        self._max_size = int(max_message_size_mb * 1024 * 1024)
        self._provider = provider
        self._rpc_id = 0

    def _get(self, path: str) -> Any:
        return get_json(self.base_url + path, self._message_timeout)

    def _stop_server(self) -> None:
        # OpenEnv's EnvClient.close: a container provider's stop_container,
        # else a runtime provider's stop (a launched Server has stop).
        p, self._provider = self._provider, None
        if p is None:
            return
        if hasattr(p, "stop_container"):
            p.stop_container()
        else:
            p.stop()

    def _rpc(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self._rpc_id += 1
        return {"jsonrpc": "2.0", "id": self._rpc_id, "method": method, "params": params}


class SyncPersuArenaEnv(_Base):
    """A blocking WebSocket client: one connection, one server session,
    many episodes (each :meth:`reset` starts one).

    ``base_url`` is the server (``http://127.0.0.1:8000`` or its ws://
    form); ``connect_timeout_s`` bounds the handshake,
    ``message_timeout_s`` each reply (OpenEnv's default, 60 s; docs/server.md
    gives the step latency of LLM persuadees), ``max_message_size_mb`` one
    received message. ``provider``, when given (a :class:`Server` from
    :func:`launch`, or an OpenEnv container or runtime provider), is
    stopped by :meth:`close`, as OpenEnv's EnvClient does.

    Errors: ServerError for the server's error messages (the session stays
    usable, except CAPACITY_REACHED and an idle SESSION_ERROR, after which
    the server closes it); ConnectionClosed when the connection ends;
    TimeoutError when a reply is late: the connection is then closed (its
    late reply must not answer a later request), so reconnect and reset."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", connect_timeout_s: float = 10.0,
                 message_timeout_s: float = 60.0, max_message_size_mb: float = DEFAULT_MAX_SIZE / (1 << 20),
                 provider: Any = None):
        super().__init__(base_url, connect_timeout_s, message_timeout_s, max_message_size_mb, provider)
        self._ws: Optional[WebSocket] = None

    @classmethod
    def from_binary(cls, *flags: str, binary: Optional[str] = None, **kwargs: Any) -> "SyncPersuArenaEnv":
        """Launches ``persuarena serve FLAGS`` (:func:`launch`) and returns a
        connected client that stops it on :meth:`close`: the local
        counterpart of OpenEnv's ``from_docker_image``. ``kwargs`` go to
        the constructor. Errors: launch's and connect's."""
        srv = launch(*flags, binary=binary)
        try:
            return cls(srv.base_url, provider=srv, **kwargs).connect()
        except BaseException:
            srv.stop()
            raise

    def connect(self) -> "SyncPersuArenaEnv":
        """Opens the WebSocket session (done by the first request
        otherwise, and again after the connection closed, or after the
        server ended the session unasked: an idle timeout's SESSION_ERROR,
        so the next request goes through on a new session). Raises
        ConnectionError when the server cannot be reached or refuses."""
        if self._ws is not None and self._ws.closed is None and self._ws.unprompted():
            self.disconnect()
        if self._ws is None or self._ws.closed is not None:
            try:
                self._ws = WebSocket.connect(self.ws_url, self._connect_timeout, self._max_size)
            except (OSError, ValueError) as exc:
                raise ConnectionError("cannot connect to %s: %s" % (self.ws_url, exc)) from exc
        return self

    def _send(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        self.connect()
        assert self._ws is not None
        try:
            self._ws.send(json.dumps(msg))
            raw = self._ws.recv(self._message_timeout)
        except TimeoutError:
            self.disconnect()
            raise
        except OSError:  # ConnectionClosed included: the next request reconnects
            ws, self._ws = self._ws, None
            ws.close()
            raise
        return _reply(raw)

    def reset(self, **options: Any) -> StepResult[PersuArenaObservation]:
        """Starts an episode. ``options`` are the reset options of
        docs/server.md (scenario_id, set, split, seed, rollout, reward,
        episode_id); unknown ones are a VALIDATION_ERROR."""
        return parse_result(self._send({"type": "reset", "data": options})["data"])

    def step(self, action: ActionLike) -> StepResult[PersuArenaObservation]:
        """Sends one persuader turn: a PersuArenaAction, its message as a
        str, or the wire dict."""
        return parse_result(self._send({"type": "step", "data": _action_payload(action)})["data"])

    def state(self) -> PersuArenaState:
        """The session's episode bookkeeping."""
        return parse_state(self._send({"type": "state"})["data"])

    def mcp(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """One MCP JSON-RPC request as a {"type": "mcp"} message of this
        session (OpenEnv's WSMCPMessage); returns its result. The tools act
        on this session's episode. Raises MCPError for a JSON-RPC error."""
        return _rpc_result(self._send({"type": "mcp", "data": self._rpc(method, params or {})})["data"])

    def list_tools(self) -> List[Dict[str, Any]]:
        """MCP tools/list over this session."""
        return self.mcp("tools/list")["tools"]

    def call_tool(self, name: str, **arguments: Any) -> Dict[str, Any]:
        """MCP tools/call on this session's episode (say needs no
        episode_id here); returns the structuredContent. Errors as
        :meth:`HTTPPersuArenaEnv.call_tool`."""
        msg = {"type": "mcp", "data": self._rpc("tools/call", {"name": name, "arguments": arguments})}
        return _tool_result(self._send(msg)["data"])

    def metadata(self) -> Dict[str, Any]:
        """GET /metadata: name, version, reward modes, probes, limits..."""
        return self._get("/metadata")

    def schema(self) -> Dict[str, Any]:
        """GET /schema: the JSON Schemas of action, observation, state."""
        return self._get("/schema")

    def disconnect(self) -> None:
        """Sends {"type": "close"} and closes the connection; best effort,
        never raises."""
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                ws.send(json.dumps({"type": "close"}))
            except OSError:
                pass
            ws.close()

    def close(self) -> None:
        """Disconnects, and stops the provider this client was given."""
        self.disconnect()
        self._stop_server()

    def __enter__(self) -> "SyncPersuArenaEnv":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()


class PersuArenaEnv(_Base):
    """The async WebSocket client (OpenEnv's EnvClient shape): the same
    constructor, methods and errors as :class:`SyncPersuArenaEnv`, as
    coroutines; ``async with`` connects and closes. :meth:`sync` returns a
    blocking client of the same server and settings."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", connect_timeout_s: float = 10.0,
                 message_timeout_s: float = 60.0, max_message_size_mb: float = DEFAULT_MAX_SIZE / (1 << 20),
                 provider: Any = None):
        super().__init__(base_url, connect_timeout_s, message_timeout_s, max_message_size_mb, provider)
        self._ws: Optional[AsyncWebSocket] = None

    def sync(self) -> SyncPersuArenaEnv:
        """A blocking client of the same server, with its own connection
        (and the provider to stop, which this client then no longer stops)."""
        p, self._provider = self._provider, None
        return SyncPersuArenaEnv(self.base_url, self._connect_timeout, self._message_timeout,
                                 self._max_size / (1 << 20), p)

    @classmethod
    async def from_binary(cls, *flags: str, binary: Optional[str] = None, **kwargs: Any) -> "PersuArenaEnv":
        """As :meth:`SyncPersuArenaEnv.from_binary` (the launch runs in a
        worker thread)."""
        srv = await asyncio.to_thread(launch, *flags, binary=binary)
        try:
            return await cls(srv.base_url, provider=srv, **kwargs).connect()
        except BaseException:
            await asyncio.to_thread(srv.stop)
            raise

    async def connect(self) -> "PersuArenaEnv":
        """As :meth:`SyncPersuArenaEnv.connect`."""
        if self._ws is not None and self._ws.closed is None and await self._ws.unprompted():
            await self.disconnect()
        if self._ws is None or self._ws.closed is not None:
            try:
                self._ws = await AsyncWebSocket.connect(self.ws_url, self._connect_timeout, self._max_size)
            except (OSError, ValueError, asyncio.TimeoutError) as exc:
                raise ConnectionError("cannot connect to %s: %s" % (self.ws_url, exc)) from exc
        return self

    async def _send(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        await self.connect()
        assert self._ws is not None
        try:
            await self._ws.send(json.dumps(msg))
            raw = await asyncio.wait_for(self._ws.recv(), self._message_timeout)
        except asyncio.TimeoutError:
            await self.disconnect()
            raise TimeoutError("no reply from %s within %g s" % (self.ws_url, self._message_timeout)) from None
        except OSError:  # ConnectionClosed included: the next request reconnects
            ws, self._ws = self._ws, None
            await ws.close()
            raise
        return _reply(raw)

    async def reset(self, **options: Any) -> StepResult[PersuArenaObservation]:
        """As :meth:`SyncPersuArenaEnv.reset`."""
        return parse_result((await self._send({"type": "reset", "data": options}))["data"])

    async def step(self, action: ActionLike) -> StepResult[PersuArenaObservation]:
        """As :meth:`SyncPersuArenaEnv.step`."""
        return parse_result((await self._send({"type": "step", "data": _action_payload(action)}))["data"])

    async def state(self) -> PersuArenaState:
        """As :meth:`SyncPersuArenaEnv.state`."""
        return parse_state((await self._send({"type": "state"}))["data"])

    async def mcp(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """As :meth:`SyncPersuArenaEnv.mcp`."""
        return _rpc_result((await self._send({"type": "mcp", "data": self._rpc(method, params or {})}))["data"])

    async def list_tools(self) -> List[Dict[str, Any]]:
        """As :meth:`SyncPersuArenaEnv.list_tools`."""
        return (await self.mcp("tools/list"))["tools"]

    async def call_tool(self, name: str, **arguments: Any) -> Dict[str, Any]:
        """As :meth:`SyncPersuArenaEnv.call_tool`."""
        msg = {"type": "mcp", "data": self._rpc("tools/call", {"name": name, "arguments": arguments})}
        return _tool_result((await self._send(msg))["data"])

    async def metadata(self) -> Dict[str, Any]:
        """GET /metadata (in a worker thread)."""
        return await asyncio.to_thread(self._get, "/metadata")

    async def schema(self) -> Dict[str, Any]:
        """GET /schema (in a worker thread)."""
        return await asyncio.to_thread(self._get, "/schema")

    async def disconnect(self) -> None:
        """As :meth:`SyncPersuArenaEnv.disconnect`."""
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await ws.send(json.dumps({"type": "close"}))
            except OSError:
                pass
            await ws.close()

    async def close(self) -> None:
        """Disconnects, and stops the provider this client was given."""
        await self.disconnect()
        if self._provider is not None:
            await asyncio.to_thread(self._stop_server)

    async def __aenter__(self) -> "PersuArenaEnv":
        return await self.connect()

    async def __aexit__(self, *exc) -> None:
        await self.close()


class HTTPPersuArenaEnv(_Base):
    """A blocking client over the HTTP endpoints: :meth:`reset` creates a
    server-held episode and keeps its id (``episode_id``), which
    :meth:`step`, :meth:`state` and :meth:`close` send back. One episode
    at a time per client; the WebSocket clients are faster for training.

    ``message_timeout_s`` bounds each request. Errors: ServerError with
    the HTTP status; OSError when the server cannot be reached."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", message_timeout_s: float = 60.0,
                 provider: Any = None):
        super().__init__(base_url, message_timeout_s, message_timeout_s, 0, provider)
        self.episode_id = ""

    def health(self) -> Dict[str, Any]:
        """GET /health: {"status": "healthy"}."""
        return self._get("/health")

    def metadata(self) -> Dict[str, Any]:
        """GET /metadata."""
        return self._get("/metadata")

    def schema(self) -> Dict[str, Any]:
        """GET /schema."""
        return self._get("/schema")

    def mcp(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """One MCP JSON-RPC request over POST /mcp (initialize, ping,
        tools/list, tools/call); returns its result. Raises MCPError for a
        JSON-RPC error."""
        body = self._rpc(method, params or {})
        return _rpc_result(request_json("POST", self.base_url + "/mcp", body, self._message_timeout))

    def list_tools(self) -> List[Dict[str, Any]]:
        """MCP tools/list: the reset and say tools (name, title,
        description, inputSchema)."""
        return self.mcp("tools/list")["tools"]

    def call_tool(self, name: str, **arguments: Any) -> Dict[str, Any]:
        """MCP tools/call over HTTP; returns the tool's structuredContent
        (for reset and say, a reset/step response: parse it with
        :func:`parse_result`). Over HTTP say needs the episode_id the reset
        tool returned. Raises ServerError for a tool error (isError),
        MCPError for an unknown tool."""
        body = self._rpc("tools/call", {"name": name, "arguments": arguments})
        return _tool_result(request_json("POST", self.base_url + "/mcp", body, self._message_timeout))

    def reset(self, **options: Any) -> StepResult[PersuArenaObservation]:
        """POST /reset with the reset options; remembers the episode id."""
        r = parse_result(request_json("POST", self.base_url + "/reset", options, self._message_timeout))
        self.episode_id = r.observation.episode_id
        return r

    def step(self, action: ActionLike, timeout_s: Optional[float] = None,
             request_id: Optional[str] = None) -> StepResult[PersuArenaObservation]:
        """POST /step of the current episode; ``timeout_s`` (> 0) bounds
        the step on the server (OpenEnv's StepRequest.timeout_s)."""
        body: Dict[str, Any] = {"episode_id": self.episode_id, "action": _action_payload(action)}
        if timeout_s is not None:
            body["timeout_s"] = timeout_s
        if request_id is not None:
            body["request_id"] = request_id
        return parse_result(request_json("POST", self.base_url + "/step", body, self._message_timeout))

    def state(self) -> PersuArenaState:
        """GET /state of the current episode (readable for a minute after
        it ends)."""
        q = urllib.parse.urlencode({"episode_id": self.episode_id})
        return parse_state(self._get("/state?" + q))

    def close(self) -> None:
        """POST /close of an episode still held (frees its slot at once;
        an unknown or expired one is ignored), and stops the provider this
        client was given."""
        if self.episode_id:
            try:
                request_json("POST", self.base_url + "/close", {"episode_id": self.episode_id}, self._message_timeout)
            except ServerError as exc:
                if exc.code != "SESSION_ERROR":
                    raise
            self.episode_id = ""
        self._stop_server()

    def __enter__(self) -> "HTTPPersuArenaEnv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncHTTPPersuArenaEnv:
    """:class:`HTTPPersuArenaEnv` as coroutines: each request runs in a
    worker thread (asyncio.to_thread), so an event loop is never blocked."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", message_timeout_s: float = 60.0,
                 provider: Any = None):
        self._c = HTTPPersuArenaEnv(base_url, message_timeout_s, provider)

    @property
    def episode_id(self) -> str:
        """The current episode's id ("" before a reset or after close)."""
        return self._c.episode_id

    async def health(self) -> Dict[str, Any]:
        """As :meth:`HTTPPersuArenaEnv.health`, in a worker thread."""
        return await asyncio.to_thread(self._c.health)

    async def metadata(self) -> Dict[str, Any]:
        """As :meth:`HTTPPersuArenaEnv.metadata`, in a worker thread."""
        return await asyncio.to_thread(self._c.metadata)

    async def schema(self) -> Dict[str, Any]:
        """As :meth:`HTTPPersuArenaEnv.schema`, in a worker thread."""
        return await asyncio.to_thread(self._c.schema)

    async def reset(self, **options: Any) -> StepResult[PersuArenaObservation]:
        """As :meth:`HTTPPersuArenaEnv.reset`, in a worker thread."""
        return await asyncio.to_thread(lambda: self._c.reset(**options))

    async def step(self, action: ActionLike, timeout_s: Optional[float] = None,
                   request_id: Optional[str] = None) -> StepResult[PersuArenaObservation]:
        """As :meth:`HTTPPersuArenaEnv.step`, in a worker thread."""
        return await asyncio.to_thread(self._c.step, action, timeout_s, request_id)

    async def state(self) -> PersuArenaState:
        """As :meth:`HTTPPersuArenaEnv.state`, in a worker thread."""
        return await asyncio.to_thread(self._c.state)

    async def mcp(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """As :meth:`HTTPPersuArenaEnv.mcp`, in a worker thread."""
        return await asyncio.to_thread(self._c.mcp, method, params)

    async def list_tools(self) -> List[Dict[str, Any]]:
        """As :meth:`HTTPPersuArenaEnv.list_tools`, in a worker thread."""
        return await asyncio.to_thread(self._c.list_tools)

    async def call_tool(self, name: str, **arguments: Any) -> Dict[str, Any]:
        """As :meth:`HTTPPersuArenaEnv.call_tool`, in a worker thread."""
        return await asyncio.to_thread(lambda: self._c.call_tool(name, **arguments))

    async def close(self) -> None:
        """As :meth:`HTTPPersuArenaEnv.close`, in a worker thread."""
        await asyncio.to_thread(self._c.close)

    async def __aenter__(self) -> "AsyncHTTPPersuArenaEnv":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


#: The client class name OpenEnv's AutoEnv infers for the manifest name
#: "persuarena" (huggingface/OpenEnv 385de5e, src/openenv/auto/_discovery.py:192-223,
#: _infer_class_name: "persuarena_env" -> "PersuarenaEnv").
PersuarenaEnv = PersuArenaEnv


class Server(_launch.Server):
    """A running ``persuarena serve`` (:func:`launch`), with constructors of
    its clients; ``stop()``, ``running()``, ``base_url`` and the log are
    :class:`persuarena._launch.Server`'s."""

    def client(self, **kwargs: Any) -> "PersuArenaEnv":
        """An async WebSocket client of this server (:class:`PersuArenaEnv`);
        ``kwargs`` go to its constructor."""
        return PersuArenaEnv(self.base_url, **kwargs)

    def sync_client(self, **kwargs: Any) -> "SyncPersuArenaEnv":
        """A blocking WebSocket client (:class:`SyncPersuArenaEnv`)."""
        return SyncPersuArenaEnv(self.base_url, **kwargs)

    def http_client(self, **kwargs: Any) -> "HTTPPersuArenaEnv":
        """A blocking HTTP client (:class:`HTTPPersuArenaEnv`)."""
        return HTTPPersuArenaEnv(self.base_url, **kwargs)


def launch(*flags: str, **kwargs: Any) -> Server:
    """Starts ``persuarena serve FLAGS`` on a free port and returns the
    running :class:`Server` (:func:`persuarena._launch.launch`, whose keyword
    arguments ``binary``, ``host``, ``ready_timeout_s`` and ``env`` it
    takes). Raises BinaryNotFound or LaunchError as that does."""
    srv = _launch.launch(*flags, server_class=Server, **kwargs)
    assert isinstance(srv, Server)
    return srv
