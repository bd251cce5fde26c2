"""PersuArena as a TRL GRPOTrainer environment (``environment_factory``).

The class below talks to a running ``persuarena serve`` over its OpenEnv
WebSocket channel (``/ws``): client messages ``{"type": "reset" | "step" |
"state" | "close", "data": {...}}``, server replies ``{"type":
"observation", "data": {"observation": {...}, "reward": x, "done": b,
"metadata": {...}}}``, ``{"type": "state", "data": {...}}`` or ``{"type":
"error", "data": {"message": ..., "code": ...}}``.

TRL creates one ``PersuArenaEnv`` per generation, calls ``reset(**row)``
with the dataset row's columns at the start of each episode, and exposes
every public method other than ``reset`` as a tool: here only ``say``, one
persuader turn. The episode's reward is kept on the instance
(``env.reward``, the sum of the rewards the server returned) and read by
``persuarena_reward``.

Only the standard library is imported at module level. The WebSocket client
(``websockets`` >= 12, or ``websocket-client``) is imported when the first
connection opens, so the file compiles and imports without either.

Configuration comes from environment variables, since TRL constructs the
class without arguments:

  PERSUARENA_URL      WebSocket URL of the server (default ws://127.0.0.1:8000/ws)
  PERSUARENA_REWARD   reward mode per episode: dense, outcome or both
                      (default: the server's)
  PERSUARENA_TIMEOUT  seconds to wait for one reply (default 300: an LLM
                      persuadee and its probes can take a while)
"""

import json
import os
import re
import time

DEFAULT_URL = "ws://127.0.0.1:8000/ws"

# Dataset columns forwarded to the server's reset (its ResetOptions); other
# columns (the prompt, ...) stay here. The server rejects unknown fields.
RESET_KEYS = ("scenario_id", "set", "split", "seed", "rollout", "reward", "episode_id")

# Reward given by persuarena_reward, on top of what was received, to an
# episode the model left unfinished (it stopped calling ``say`` before the
# persuadee decided). -1 is R_goal of Pending, "no decision" (SPEC §1).
UNFINISHED_REWARD = -1.0

# Server error codes worth reconnecting for.
_RETRY_CODES = ("CAPACITY_REACHED",)


class PersuArenaError(RuntimeError):
    """An error reply from the server: ``code`` is one of INVALID_JSON,
    UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR, CAPACITY_REACHED,
    SESSION_ERROR (or CONNECTION for a transport failure)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class _Socket:
    """A blocking WebSocket with send/recv/close over whichever client
    library is installed."""

    def __init__(self, url, timeout):
        self._timeout = timeout
        try:
            from websockets.sync.client import connect  # websockets >= 12
        except ImportError:
            connect = None
        if connect is not None:
            self._ws = connect(url, open_timeout=timeout, max_size=None)
            self._kind = "websockets"
            return
        try:
            import websocket  # websocket-client
        except ImportError as exc:
            raise ImportError(
                "PersuArenaEnv needs a WebSocket client: pip install websockets (or websocket-client)"
            ) from exc
        self._ws = websocket.create_connection(url, timeout=timeout)
        self._kind = "websocket-client"

    def send(self, text):
        self._ws.send(text)

    def recv(self):
        if self._kind == "websockets":
            return self._ws.recv(timeout=self._timeout)
        return self._ws.recv()

    def close(self):
        try:
            self._ws.close()
        except Exception:
            pass


def _strip_think(text):
    """Drops <think>...</think> blocks a reasoning model may emit, so the
    persuadee sees only the utterance."""
    return re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL).strip()


def _party(p, fallback):
    if not isinstance(p, dict):
        return fallback
    name, role = p.get("name") or "", p.get("role") or fallback
    return "%s (%s)" % (name, role) if name else role


def render_scenario(obs):
    """Renders the public scenario of an observation as the episode's first
    message to the persuader. It holds only public fields: the hidden
    profile never leaves the server."""
    sc = obs.get("scenario") or {}
    lines = [
        "You are %s. You are talking with %s." % (
            _party(sc.get("persuader"), "the persuader"), _party(sc.get("persuadee"), "the other person")),
        "Relationship: %s (%s)." % (sc.get("relationship", ""), sc.get("closeness", "")),
        "Domain: %s (%s)." % (sc.get("domain", ""), sc.get("family", "")),
        "Your proposal: %s" % sc.get("proposal", ""),
        "Full acceptance means: %s" % sc.get("accept_means", ""),
        "Conditional acceptance means: %s" % sc.get("conditional_means", ""),
        "Background: %s" % sc.get("background", ""),
        "You have at most %s turns. Speak with the say tool, one message per turn. "
        "Persuade honestly and respectfully: no deception, no pressure; the choice is theirs." % obs.get("tmax", "?"),
    ]
    return "\n".join(lines)


class PersuArenaEnv:
    """One PersuArena episode at a time over one WebSocket session.

    Attributes read after an episode: ``reward`` (sum of the step rewards
    the server returned, in its reward mode), ``rewards`` (each step's),
    ``done``, ``decision`` (the persuadee's last decision), ``terminal``
    (accept, conditional, pending, reject, truncated or failed once done),
    ``r_out`` (R_out from the last step's metadata, or None), ``beliefs``
    (B_t after each step, None where unreadable) and ``turn``.
    """

    def __init__(self):
        self.url = os.environ.get("PERSUARENA_URL", DEFAULT_URL)
        self.reward_mode = os.environ.get("PERSUARENA_REWARD", "")
        self.timeout = float(os.environ.get("PERSUARENA_TIMEOUT", "300"))
        self._sock = None
        self._clear()

    def _clear(self):
        self.reward = 0.0
        self.rewards = []
        self.done = False
        self.decision = "continue"
        self.terminal = ""
        self.r_out = None
        self.beliefs = []
        self.turn = 0
        self.tmax = 0
        self.scenario = {}

    # --- protocol --------------------------------------------------------

    def _connect(self):
        delay = 1.0
        for attempt in range(6):
            try:
                self._sock = _Socket(self.url, self.timeout)
                return
            except ImportError:
                raise
            except Exception as exc:  # refused, DNS, timeout: retry with backoff
                if attempt == 5:
                    raise PersuArenaError("CONNECTION", "cannot reach %s: %s" % (self.url, exc))
            time.sleep(delay)
            delay = min(2 * delay, 30.0)

    def _close_socket(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _request(self, kind, data=None):
        """Sends one message and returns the reply's data; raises
        PersuArenaError for an error reply or a broken connection."""
        if self._sock is None:
            self._connect()
        msg = {"type": kind}
        if data is not None:
            msg["data"] = data
        try:
            self._sock.send(json.dumps(msg))
            reply = json.loads(self._sock.recv())
        except PersuArenaError:
            raise
        except Exception as exc:
            self._close_socket()
            raise PersuArenaError("CONNECTION", "%s failed: %s" % (kind, exc))
        if reply.get("type") == "error":
            err = reply.get("data") or {}
            code = err.get("code", "EXECUTION_ERROR")
            if code in _RETRY_CODES or code == "SESSION_ERROR":
                self._close_socket()
            raise PersuArenaError(code, err.get("message", ""))
        return reply.get("data") or {}

    def _observe(self, data):
        obs = data.get("observation") or {}
        meta = data.get("metadata") or {}
        r = data.get("reward")
        if r is not None:
            self.rewards.append(float(r))
            self.reward += float(r)
        self.done = bool(data.get("done"))
        self.decision = obs.get("decision", self.decision)
        self.turn = obs.get("turn", self.turn)
        self.tmax = obs.get("tmax", self.tmax)
        self.terminal = meta.get("terminal") or self.terminal
        if meta.get("r_out") is not None:
            self.r_out = float(meta["r_out"])
        self.beliefs.append(meta.get("belief"))
        return obs

    def _state(self):
        """The server's episode bookkeeping (OpenEnv State), for logging."""
        return self._request("state")

    # --- TRL interface ---------------------------------------------------

    def reset(self, **kwargs):
        """Starts an episode. Dataset columns named in RESET_KEYS
        (scenario_id, seed, ...) are forwarded to the server; the rest are
        ignored. Returns the public scenario as text."""
        self._clear()
        data = {k: kwargs[k] for k in RESET_KEYS if k in kwargs and kwargs[k] is not None}
        if self.reward_mode and "reward" not in data:
            data["reward"] = self.reward_mode
        for attempt in range(6):
            try:
                reply = self._request("reset", data)
                break
            except PersuArenaError as exc:
                # A session that idled out or a full server: reconnect.
                if exc.code not in ("CONNECTION", "SESSION_ERROR") + _RETRY_CODES or attempt == 5:
                    raise
                time.sleep(min(2.0 ** attempt, 30.0))
        obs = self._observe(reply)
        self.scenario = obs.get("scenario") or {}
        return render_scenario(obs)

    def say(self, message: str) -> str:
        """
        Say one message to the other person and get their reply. Each call is one turn of the conversation.

        Args:
            message: What you say to them, in plain words: one turn of the conversation.

        Returns:
            Their reply, and their decision once they have made one.
        """
        if self.done:
            raise ValueError("The conversation is over (%s). Do not call say again." % (self.terminal or self.decision))
        text = _strip_think(message or "")
        try:
            data = self._request("step", {"message": text})
        except PersuArenaError as exc:
            if exc.code == "VALIDATION_ERROR":
                raise ValueError("Invalid message: %s" % exc.message)
            raise
        obs = self._observe(data)
        reply = obs.get("reply", "")
        if self.done:
            outcome = self.terminal or obs.get("decision", "")
            reply += "\n[The conversation is over. Outcome: %s.]" % outcome
        return reply

    def __del__(self):
        try:
            if self._sock is not None:
                self._sock.send(json.dumps({"type": "close"}))
        except Exception:
            pass
        self._close_socket()


def persuarena_reward(environments, **kwargs):
    """TRL reward function: each environment's episode reward, plus
    UNFINISHED_REWARD for an episode the model left before the persuadee
    decided (or before Tmax)."""
    out = []
    for env in environments:
        r = env.reward
        if not env.done:
            r += UNFINISHED_REWARD
        out.append(r)
    return out
