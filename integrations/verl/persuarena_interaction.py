"""PersuArena as a verl multi-turn Interaction.

``PersuArenaInteraction`` plays the persuadee side of a verl multi-turn
rollout by talking to a running ``persuarena serve`` over its OpenEnv
WebSocket channel (``/ws``): client messages ``{"type": "reset" | "step" |
"state" | "close", "data": {...}}``, server replies ``{"type":
"observation", "data": {"observation": {..., "metadata": {...}}, "reward":
x, "done": b}}`` (OpenEnv's StepResponse shape: the metadata travels inside
the observation), ``{"type": "state", ...}`` or ``{"type": "error",
"data": {"message": ..., "code": ...}}``.

Checked against verl's ToolAgentLoop (volcengine/verl
b178a3cd56f58b2d502255daba591e92833930a7,
verl/experimental/agent_loop/tool_agent_loop.py): for each trajectory it
calls ``start_interaction(request_id, **interaction_kwargs)`` (the row's
``extra_info["interaction_kwargs"]``, which must name the interaction),
then ``generate_response(request_id, messages, **interaction_kwargs)``
after each assistant turn, appends a non-None turn score to
``turn_scores`` and stops when told done (or at its own turn and length
limits). It never calls ``calculate_score`` or ``finalize_interaction``.
The reward manager then hands ``turn_scores`` to the custom reward
function as ``extra_info["turn_scores"]``
(verl/experimental/reward_loop/reward_manager/naive.py). Rows reach
ToolAgentLoop only with ``agent_name: tool_agent`` (make_dataset.py writes
it).

Each trajectory gets its own WebSocket session: ``start_interaction``
opens it and resets the episode; each ``generate_response`` sends the
model's last assistant message as the persuader's turn and returns the
persuadee's visible reply as the next user message, the step's reward as
the turn score, and done once the persuadee decides (or at Tmax). Since
nothing else would, the adapter closes the session itself as soon as the
episode is done, and closes sessions unused for ``stale_s`` (a trajectory
that verl cut off at its length limit) when the next one starts.
``finalize_interaction`` also closes it, for loops that call it.

The verl import is guarded and the WebSocket client (``websockets``) is
imported when a session opens, so this file compiles and imports without
either installed.
"""

import asyncio
import hashlib
import json
import re
import time
from collections import OrderedDict
from typing import Any, Optional
from uuid import uuid4

try:
    from verl.interactions.base import BaseInteraction
except ImportError:  # verl not installed: a stand-in with the same contract

    class BaseInteraction:  # type: ignore[no-redef]
        """Minimal stand-in for verl.interactions.base.BaseInteraction."""

        def __init__(self, config: dict):
            self.config = config
            self.name = config.get("name", "interaction_agent")


# interaction_kwargs forwarded to the server's reset (its ResetOptions); the
# server rejects unknown fields, so others (name, ...) stay here.
RESET_KEYS = ("scenario_id", "set", "split", "seed", "rollout", "reward", "episode_id")


class PersuArenaError(RuntimeError):
    """An error reply from the server: ``code`` is one of INVALID_JSON,
    UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR, CAPACITY_REACHED,
    SESSION_ERROR (or CONNECTION for a transport failure)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


async def _connect(url, timeout):
    try:
        from websockets.asyncio.client import connect  # websockets >= 13
    except ImportError:
        try:
            from websockets import connect  # older websockets
        except ImportError as exc:
            raise ImportError("PersuArenaInteraction needs: pip install websockets") from exc
    return await asyncio.wait_for(connect(url, max_size=None), timeout)


def _strip_think(text):
    """Drops <think>...</think> blocks a reasoning model may emit."""
    return re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL).strip()


def _content(message):
    """The text of a chat message whose content is a string or a list of
    parts."""
    c = message.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return ""


# Finished episodes whose scores stay readable by calculate_score.
_KEEP_FINISHED = 4096


def instance_rollout(instance_id, base=0):
    """The rollout index of a trajectory whose interaction_kwargs name no
    rollout: base + (the first 31 bits of SHA-256 of instance_id). verl
    runs a row's rollout.n trajectories with identical interaction_kwargs
    and a fresh request id each, so this gives each its own persuadee seed
    (the same scenario: the seed is the row's); two of n trajectories
    collide with probability about n^2 / 2^32."""
    h = hashlib.sha256(str(instance_id).encode("utf-8")).digest()
    return int(base) + (int.from_bytes(h[:4], "big") & 0x7FFFFFFF)


class _Episode:
    def __init__(self, ws):
        self.ws = ws
        self.reward = 0.0
        self.rewards = []
        self.done = False
        self.failed = False
        self.terminal = ""
        self.r_out = None
        self.turn = 0
        self.last = time.monotonic()
        self.reset_data = {}


class PersuArenaInteraction(BaseInteraction):
    """verl Interaction for PersuArena.

    Config keys (interaction config YAML, ``config:``):
      url            WebSocket URL of persuarena serve (default ws://127.0.0.1:8000/ws)
      reward         reward mode per episode: dense, outcome or both
                     (default: the server's)
      timeout_s      seconds to wait for one reply (default 300)
      retries        connection attempts when the server is full or
                     unreachable (default 6, with doubling back-off)
      invalid_reward turn score of a message the server refuses (empty or too
                     long); the episode then ends (default -1.0, the
                     R_goal of Pending: no decision)
      strip_think    drop <think>...</think> from the model's message (default true)
      stale_s        an unfinished session unused for this long is closed when
                     another trajectory starts (default 900: longer than
                     one assistant turn takes; the server's own idle timeout
                     is 600 s by default)
    """

    def __init__(self, config: dict):
        super().__init__(config)
        self.url = config.get("url", "ws://127.0.0.1:8000/ws")
        self.reward_mode = config.get("reward", "")
        self.timeout = float(config.get("timeout_s", 300))
        self.retries = int(config.get("retries", 6))
        self.invalid_reward = float(config.get("invalid_reward", -1.0))
        self.strip_think = bool(config.get("strip_think", True))
        self.stale_s = float(config.get("stale_s", 900))
        self._episodes = {}  # instance id -> _Episode with an open session
        self._finished = OrderedDict()  # instance id -> finished _Episode

    async def _close(self, instance_id, ep):
        """Closes ep's session (close message, then the socket) and moves
        it to the finished episodes."""
        self._episodes.pop(instance_id, None)
        ws, ep.ws = ep.ws, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.send(json.dumps({"type": "close"})), 5)
            except Exception:
                pass
            try:
                await asyncio.wait_for(ws.close(), 5)
            except Exception:
                pass
        self._finished[instance_id] = ep
        while len(self._finished) > _KEEP_FINISHED:
            self._finished.popitem(last=False)

    async def _sweep(self):
        """Closes sessions unused for stale_s."""
        now = time.monotonic()
        for iid, ep in list(self._episodes.items()):
            if now - ep.last > self.stale_s:
                await self._close(iid, ep)

    async def _request(self, ep, kind, data=None):
        msg = {"type": kind}
        if data is not None:
            msg["data"] = data
        ep.last = time.monotonic()
        try:
            await ep.ws.send(json.dumps(msg))
            reply = json.loads(await asyncio.wait_for(ep.ws.recv(), self.timeout))
        except Exception as exc:
            raise PersuArenaError("CONNECTION", "%s failed: %s" % (kind, exc or type(exc).__name__))
        finally:
            ep.last = time.monotonic()
        if reply.get("type") == "error":
            err = reply.get("data") or {}
            raise PersuArenaError(err.get("code", "EXECUTION_ERROR"), err.get("message", ""))
        return reply.get("data") or {}

    def _observe(self, ep, data):
        r = data.get("reward")
        if r is not None:
            ep.rewards.append(float(r))
            ep.reward += float(r)
        ep.done = bool(data.get("done"))
        obs = data.get("observation") or {}
        meta = obs.get("metadata") or {}
        ep.terminal = meta.get("terminal") or ep.terminal
        if meta.get("r_out") is not None:
            ep.r_out = float(meta["r_out"])
        ep.turn = obs.get("turn", ep.turn)
        return obs, (0.0 if r is None else float(r))

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs) -> str:
        """Opens a session and resets an episode with the forwarded
        ``interaction_kwargs`` (scenario_id, seed, split, ...); with a seed
        and no rollout, the rollout is instance_rollout(instance_id).
        Retries with back-off while the server is full (CAPACITY_REACHED)
        or unreachable. First closes sessions unused for stale_s."""
        if instance_id is None:
            instance_id = str(uuid4())
        await self._sweep()
        data = {k: kwargs[k] for k in RESET_KEYS if k in kwargs and kwargs[k] is not None}
        if self.reward_mode and "reward" not in data:
            data["reward"] = self.reward_mode
        if data.get("seed") is not None and "rollout" not in data:
            data["rollout"] = instance_rollout(instance_id)
        delay = 1.0
        for attempt in range(self.retries):
            ws = None
            try:
                ws = await _connect(self.url, self.timeout)
                ep = _Episode(ws)
                ep.reset_data = data
                reset = await self._request(ep, "reset", data)
                self._observe(ep, reset)
                self._episodes[instance_id] = ep
                return instance_id
            except ImportError:
                raise
            except Exception as exc:
                if ws is not None:
                    try:
                        await ws.close()
                    except Exception:
                        pass
                retry = isinstance(exc, PersuArenaError) and exc.code in ("CAPACITY_REACHED", "CONNECTION")
                retry = retry or isinstance(exc, (OSError, asyncio.TimeoutError))
                if not retry or attempt == self.retries - 1:
                    raise
            await asyncio.sleep(delay)
            delay = min(2 * delay, 30.0)
        raise PersuArenaError("CONNECTION", "no session after %d attempts" % self.retries)

    async def generate_response(self, instance_id: str, messages: list, **kwargs):
        """Sends the last assistant message as the persuader's turn.

        Returns (done, reply, turn_score, extra): done once the persuadee
        decided or Tmax was reached; reply is the persuadee's visible reply
        (the next user message); turn_score is the step's reward in the
        server's reward mode; extra holds turn, decision, terminal, r_out
        and the step's belief and dense reward. A done episode's session
        is closed at once.

        When the server does not answer within timeout_s, the connection
        fails, or the server reports the step failed (EXECUTION_ERROR), the
        session is closed (a late reply must never be read as the answer
        to a later step), the episode ends as failed and the result is
        (True, a notice, None, {"error": ..., "failed": True}): no turn
        score is added for the failed step.
        """
        ep = self._episodes.get(instance_id) or self._finished.get(instance_id)
        if ep is None:
            raise KeyError("unknown instance_id %r: start_interaction first" % instance_id)
        if ep.done:
            extra = {"terminal": ep.terminal}
            if ep.failed:
                extra["failed"] = True
            return True, "", None, extra
        text = ""
        for m in reversed(messages):
            if m.get("role") == "assistant":
                text = _content(m)
                break
        if self.strip_think:
            text = _strip_think(text)
        try:
            data = await self._request(ep, "step", {"message": text})
        except PersuArenaError as exc:
            if exc.code != "VALIDATION_ERROR":
                # A timeout or broken connection (CONNECTION), or the
                # persuadee failing on the server (EXECUTION_ERROR, stored
                # there as failed): the episode ends as failed, without a
                # turn score, and without stopping the training run.
                ep.done, ep.failed, ep.terminal = True, True, "failed"
                await self._close(instance_id, ep)
                return True, "(the conversation ended: %s)" % exc, None, {"error": str(exc), "failed": True}
            # An empty or oversized message ends the episode with a penalty.
            ep.done = True
            ep.rewards.append(self.invalid_reward)
            ep.reward += self.invalid_reward
            await self._close(instance_id, ep)
            return True, "(no valid message: %s)" % exc.message, self.invalid_reward, {"error": exc.message}
        obs, score = self._observe(ep, data)
        meta = obs.get("metadata") or {}
        extra = {
            "turn": obs.get("turn"),
            "decision": obs.get("decision"),
            "terminal": ep.terminal,
            "r_out": ep.r_out,
            "belief": meta.get("belief"),
            "dense": meta.get("dense"),
        }
        if ep.done:
            await self._close(instance_id, ep)
        return ep.done, obs.get("reply", ""), score, extra

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        """The episode's reward so far: the sum of its turn scores."""
        ep = self._episodes.get(instance_id) or self._finished.get(instance_id)
        return 0.0 if ep is None else ep.reward

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        """Closes the episode's session (if still open) and forgets it."""
        ep = self._episodes.get(instance_id)
        if ep is not None:
            await self._close(instance_id, ep)
        self._finished.pop(instance_id, None)


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **kwargs):
    """verl custom reward function: the episode reward as the sum of the
    interaction's turn scores. ToolAgentLoop hands them on as
    ``extra_info["turn_scores"]`` (verl b178a3c, reward_manager/naive.py
    merges the loop's extra fields into extra_info). Older verl versions
    passed ``reward_scores["user_turn_rewards"]`` (as a keyword or as
    ``extra_info["rollout_reward_scores"]``); that is read when
    turn_scores is absent. Raises ValueError when neither is present: a
    trajectory without turn scores is not silently scored 0."""
    if isinstance(extra_info, dict) and extra_info.get("turn_scores") is not None:
        return float(sum(float(s) for s in extra_info["turn_scores"]))
    scores = kwargs.get("reward_scores")
    if not scores and isinstance(extra_info, dict):
        scores = extra_info.get("rollout_reward_scores")
    if isinstance(scores, dict) and scores.get("user_turn_rewards") is not None:
        return float(sum(float(s) for s in scores["user_turn_rewards"]))
    raise ValueError("compute_score: no turn scores (extra_info['turn_scores']): is the row's agent_name tool_agent "
                     "and its interaction_kwargs' name in the interaction config?")
