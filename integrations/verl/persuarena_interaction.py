"""PersuArena as a verl multi-turn Interaction.

``PersuArenaInteraction`` plays the persuadee side of a verl multi-turn
rollout by talking to a running ``persuarena serve`` over its OpenEnv
WebSocket channel (``/ws``): client messages ``{"type": "reset" | "step" |
"state" | "close", "data": {...}}``, server replies ``{"type":
"observation", "data": {"observation": {...}, "reward": x, "done": b,
"metadata": {...}}}``, ``{"type": "state", ...}`` or ``{"type": "error",
"data": {"message": ..., "code": ...}}``.

Each verl trajectory (``instance_id``) gets its own WebSocket session:
``start_interaction`` opens it and resets the episode with the row's
``interaction_kwargs``; each ``generate_response`` sends the model's last
assistant message as the persuader's turn and returns the persuadee's
visible reply as the next user message, the step's reward as the turn
score, and done once the persuadee decides (or at Tmax);
``calculate_score`` is the episode's summed reward; ``finalize_interaction``
closes the session.

The verl import is guarded and the WebSocket client (``websockets``) is
imported when a session opens, so this file compiles and imports without
either installed.
"""

import asyncio
import json
import re
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


class _Episode:
    def __init__(self, ws):
        self.ws = ws
        self.reward = 0.0
        self.rewards = []
        self.done = False
        self.terminal = ""
        self.r_out = None
        self.turn = 0


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
    """

    def __init__(self, config: dict):
        super().__init__(config)
        self.url = config.get("url", "ws://127.0.0.1:8000/ws")
        self.reward_mode = config.get("reward", "")
        self.timeout = float(config.get("timeout_s", 300))
        self.retries = int(config.get("retries", 6))
        self.invalid_reward = float(config.get("invalid_reward", -1.0))
        self.strip_think = bool(config.get("strip_think", True))
        self._episodes = {}

    async def _request(self, ep, kind, data=None):
        msg = {"type": kind}
        if data is not None:
            msg["data"] = data
        try:
            await ep.ws.send(json.dumps(msg))
            reply = json.loads(await asyncio.wait_for(ep.ws.recv(), self.timeout))
        except Exception as exc:
            raise PersuArenaError("CONNECTION", "%s failed: %s" % (kind, exc))
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
        meta = data.get("metadata") or {}
        ep.terminal = meta.get("terminal") or ep.terminal
        if meta.get("r_out") is not None:
            ep.r_out = float(meta["r_out"])
        obs = data.get("observation") or {}
        ep.turn = obs.get("turn", ep.turn)
        return obs, (0.0 if r is None else float(r))

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs) -> str:
        """Opens a session and resets an episode with the forwarded
        ``interaction_kwargs`` (scenario_id, seed, split, ...). Retries
        with back-off while the server is full (CAPACITY_REACHED) or
        unreachable."""
        if instance_id is None:
            instance_id = str(uuid4())
        data = {k: kwargs[k] for k in RESET_KEYS if k in kwargs and kwargs[k] is not None}
        if self.reward_mode and "reward" not in data:
            data["reward"] = self.reward_mode
        delay = 1.0
        for attempt in range(self.retries):
            ws = None
            try:
                ws = await _connect(self.url, self.timeout)
                ep = _Episode(ws)
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
        and the step's belief and dense reward.
        """
        ep = self._episodes[instance_id]
        if ep.done:
            return True, "", 0.0, {"terminal": ep.terminal}
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
                raise
            # An empty or oversized message ends the episode with a penalty.
            ep.done = True
            ep.rewards.append(self.invalid_reward)
            ep.reward += self.invalid_reward
            return True, "(no valid message: %s)" % exc.message, self.invalid_reward, {"error": exc.message}
        obs, score = self._observe(ep, data)
        meta = data.get("metadata") or {}
        extra = {
            "turn": obs.get("turn"),
            "decision": obs.get("decision"),
            "terminal": ep.terminal,
            "r_out": ep.r_out,
            "belief": meta.get("belief"),
            "dense": meta.get("dense"),
        }
        return ep.done, obs.get("reply", ""), score, extra

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        """The episode's reward so far: the sum of its turn scores."""
        ep = self._episodes.get(instance_id)
        return 0.0 if ep is None else ep.reward

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        """Closes the episode's session and forgets it."""
        ep = self._episodes.pop(instance_id, None)
        if ep is None:
            return
        try:
            await ep.ws.send(json.dumps({"type": "close"}))
        except Exception:
            pass
        try:
            await ep.ws.close()
        except Exception:
            pass


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **kwargs):
    """verl custom reward function: the episode reward as the sum of the
    interaction's turn scores, which verl passes on as
    ``reward_scores["user_turn_rewards"]`` (in ``extra_info`` as
    ``rollout_reward_scores`` or as a keyword, depending on the verl
    version). Returns 0.0 when none are present."""
    scores = kwargs.get("reward_scores")
    if not scores and isinstance(extra_info, dict):
        scores = extra_info.get("rollout_reward_scores")
    if not isinstance(scores, dict):
        return 0.0
    return float(sum(float(s) for s in scores.get("user_turn_rewards", []) or []))
