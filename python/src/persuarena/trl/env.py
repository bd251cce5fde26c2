"""PersuArena as a TRL GRPOTrainer environment (``environment_factory``).

The class below talks to a running ``persuarena serve`` over its OpenEnv
WebSocket channel (``/ws``): client messages ``{"type": "reset" | "step" |
"state" | "close", "data": {...}}``, server replies ``{"type":
"observation", "data": {"observation": {...}, "reward": x, "done": b,
"metadata": {...}}}`` (OpenEnv's response shape; the metadata is also
inside the observation, and the public scenario only in the reset's),
``{"type": "state", "data": {...}}`` or ``{"type": "error", "data":
{"message": ..., "code": ...}}``.

TRL's GRPOTrainer, huggingface/trl v1.9.0 (and main f2cd577, the same
file), trl/trainer/grpo_trainer.py:

- ``__init__`` (:640-686) creates one probe instance with no arguments,
  takes its public methods other than ``reset`` and ``get_reward`` as
  tools (here only ``say``, one persuader turn) and, since the class
  defines ``get_reward``, adds it as a reward source of weight 1 named
  ``PersuArenaEnv``, called as ``[e.get_reward() for e in environments]``.
- ``_generate_and_score_completions`` (:2260-2333) draws instances from a
  pool reused across batches (creating more when a batch needs them) and
  calls ``reset(**row)`` with the whole dataset row; a returned string is
  appended to the content of the row's **last prompt message**, so the
  prompt must end with a user message (an empty one is fine): ``reset``
  raises ValueError when it ends with the system prompt.
- ``_calculate_rewards`` (:1612-1631) passes ``environments=`` (the
  instances, one per completion) to every reward function: ``dense_reward``
  reads each episode's dense trace there.

``get_reward`` returns the episode's outcome reward R_out (Probe-RPO
paper: R_goal + w * R_strategy), or UNFINISHED_REWARD when the model
stopped calling ``say`` before the persuadee decided, or None (TRL ignores
it) when the episode failed on the server. ``dense_reward`` returns
sum_t r_t (= B_T - B_0, missing r_t counted 0); give it the weight lambda
in GRPOConfig.reward_weights to train on R_out + lambda * sum_t r_t with
one advantage per completion, or use ``persuarena.trl.probe_rpo_trainer``
for the per-turn Probe-RPO advantage.

The ``num_generations`` rollouts of one row arrive as G identical rows.
``reset`` gives each its own persuadee: the k-th reset of the same (set,
split, scenario_id, seed) in this process is sent with rollout = row
rollout + k * WORLD_SIZE + RANK (torchrun/accelerate variables; 1 and 0
without them), so that the G rollouts of a group play the same scenario
against different persuadee randomness, as ``persuarena eval --rollouts G``
does, and processes never repeat each other's rollouts.

Needs TRL with ``environment_factory`` (GRPOTrainer refuses it without
transformers >= 5.2.0 and the jmespath package).

Only the standard library is used: the WebSocket client is
persuarena.client's.

Configuration comes from environment variables, since TRL constructs the
class without arguments:

  PERSUARENA_URL      WebSocket URL of the server (default ws://127.0.0.1:8000/ws)
  PERSUARENA_REWARD   reward mode per episode: dense, outcome or both
                      (default: the server's); it sets only what the server
                      reports as each step's reward (``rewards``), not
                      get_reward or dense_reward
  PERSUARENA_TIMEOUT  seconds to wait for one reply (default 300, the
                      server's limits.step_budget_s)
"""

import dataclasses
import os
import time
from typing import Dict

from ..verl.agent_loop import PersuArenaError, strip_think

DEFAULT_URL = "ws://127.0.0.1:8000/ws"

# Dataset columns forwarded to the server's reset (its ResetOptions); other
# columns (the prompt, ...) stay here. The server rejects unknown fields.
RESET_KEYS = ("scenario_id", "set", "split", "seed", "rollout", "reward", "episode_id")

# get_reward of an episode the model left unfinished (it stopped calling
# ``say`` before the persuadee decided). Choice: -1, R_goal of Pending, "no
# decision" (Probe-RPO paper).
UNFINISHED_REWARD = -1.0

# Server error codes worth reconnecting for.
_RETRY_CODES = ("CAPACITY_REACHED",)

# Resets per row key in this process (see PersuArenaEnv.reset).
_DRAWS: Dict[tuple, int] = {}


def _rank():
    """(RANK, WORLD_SIZE) of this process, (0, 1) outside torchrun or
    accelerate."""
    try:
        world = max(1, int(os.environ.get("WORLD_SIZE", "1")))
        rank = int(os.environ.get("RANK", "0")) % world
    except ValueError:
        return 0, 1
    return rank, world


def group_rollout(data):
    """The rollout index for the next reset of data's (set, split,
    scenario_id, seed) in this process: data's rollout (0 if absent) + k *
    WORLD_SIZE + RANK for the k-th such reset, so that identical rows (the
    G rollouts of a GRPO group) get distinct persuadee seeds. Rows without
    a seed are left alone: the server gives each a seed of its own."""
    if data.get("seed") is None:
        return data.get("rollout")
    key = (data.get("set"), data.get("split"), data.get("scenario_id"), data.get("seed"))
    k = _DRAWS.get(key, 0)
    _DRAWS[key] = k + 1
    rank, world = _rank()
    return int(data.get("rollout") or 0) + k * world + rank


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
    ``dense`` (r_t = B_t - B_{t-1} of each persuader turn, None where the
    probes were unreadable), ``done``, ``failed`` (the server ended it with
    an error), ``decision`` (the persuadee's last decision), ``terminal``
    (accept, conditional, pending, reject, truncated or failed once done),
    ``r_out`` (R_out from the last step's metadata, or None), ``beliefs``
    (B_0, B_1, ... after each step, None where unreadable), ``turn`` and
    ``calls`` (one entry per ``say`` call, in order: the 0-based index in
    ``dense`` of the turn it played, or None when it played none: a
    message the server rejected, a call after the end, a failed step).
    """

    def __init__(self):
        self.url = os.environ.get("PERSUARENA_URL", DEFAULT_URL)
        self.reward_mode = os.environ.get("PERSUARENA_REWARD", "")
        self.timeout = float(os.environ.get("PERSUARENA_TIMEOUT", "300"))
        self._client = None
        self._clear()

    def _clear(self):
        self.reward = 0.0
        self.rewards = []
        self.dense = []
        self.calls = []
        self.failed = False
        self.done = False
        self.decision = "continue"
        self.terminal = ""
        self.r_out = None
        self.beliefs = []
        self.turn = 0
        self.tmax = 0
        self.scenario = {}
        self.reset_data = {}

    # --- protocol --------------------------------------------------------

    def _connect(self):
        from ..client import SyncPersuArenaEnv

        delay = 1.0
        for attempt in range(6):
            client = SyncPersuArenaEnv(self.url, connect_timeout_s=min(self.timeout, 30.0), message_timeout_s=self.timeout)
            try:
                self._client = client.connect()
                return
            except ConnectionError as exc:  # refused, DNS, timeout: retry with backoff
                if attempt == 5:
                    raise PersuArenaError("CONNECTION", "cannot reach %s: %s" % (self.url, exc))
            time.sleep(delay)
            delay = min(2 * delay, 30.0)

    def _close_socket(self):
        if self._client is not None:
            self._client.disconnect()
            self._client = None

    def _request(self, kind, data=None):
        """Sends one message through persuarena.client and returns its
        StepResult (or State); raises PersuArenaError for an error reply
        (code as the server's), a late reply (TIMEOUT) or a broken
        connection (CONNECTION)."""
        from ..client import ServerError

        if self._client is None:
            self._connect()
        try:
            if kind == "reset":
                return self._client.reset(**data)
            if kind == "step":
                return self._client.step(data)
            return self._client.state()
        except ServerError as exc:
            if exc.code in _RETRY_CODES or exc.code == "SESSION_ERROR":
                self._close_socket()
            raise PersuArenaError(exc.code, exc.message)
        except TimeoutError as exc:
            self._close_socket()
            raise PersuArenaError("TIMEOUT", "%s: no reply within %s s (%s)" % (kind, self.timeout, exc))
        except (ConnectionError, OSError) as exc:
            self._close_socket()
            raise PersuArenaError("CONNECTION", "%s failed: %s" % (kind, exc))

    def _observe(self, res):
        """Records a reset's or step's StepResult; returns its observation
        as a dict."""
        obs = res.observation
        meta = res.metadata or {}
        if res.reward is not None:
            self.rewards.append(float(res.reward))
            self.reward += float(res.reward)
        self.done = bool(res.done)
        self.decision, self.turn, self.tmax = obs.decision, obs.turn, obs.tmax
        self.terminal = meta.get("terminal") or self.terminal
        if meta.get("r_out") is not None:
            self.r_out = float(meta["r_out"])
        self.beliefs.append(meta.get("belief"))
        if res.reward is not None:  # a step: its dense reward r_t (None when missing)
            self.dense.append(meta.get("dense"))
        return dataclasses.asdict(obs)

    def _state(self):
        """The server's episode bookkeeping (OpenEnv State) as a dict, for
        logging."""
        return dataclasses.asdict(self._request("state"))

    # --- TRL interface ---------------------------------------------------

    def reset(self, **kwargs):
        """Starts an episode. Dataset columns named in RESET_KEYS
        (scenario_id, seed, ...) are forwarded to the server, with the
        rollout given by group_rollout; the rest are ignored. Returns the
        public scenario as text, which TRL appends to the last prompt
        message. Raises ValueError when the row's prompt ends with a system
        message (the scenario would be glued onto it), or when it has
        neither a seed nor a scenario_id (see grouped_trainer)."""
        prompt = kwargs.get("prompt")
        if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict) and prompt[-1].get("role") == "system":
            raise ValueError(
                "the prompt ends with the system message: TRL appends reset()'s scenario text to the last "
                "prompt message, so end the prompt with a user message (it may be empty)")
        self._clear()
        data = {k: kwargs[k] for k in RESET_KEYS if k in kwargs and kwargs[k] is not None}
        # Choice: refuse rather than let the server draw a scenario per reset:
        # a group of different scenarios trains on a meaningless baseline.
        if data.get("seed") is None and not data.get("scenario_id"):
            raise ValueError(
                "PersuArenaEnv.reset: the row has neither a seed nor a scenario_id (TRL without a train_dataset), "
                "so each of a group's rollouts would draw its own scenario and the group baseline would compare "
                "different tasks; train with persuarena.trl.grouped_trainer() or probe_rpo_trainer(), which give "
                "each group a seed, or with a dataset that has a seed column")
        if self.reward_mode and "reward" not in data:
            data["reward"] = self.reward_mode
        rollout = group_rollout(data)
        if rollout is not None:
            data["rollout"] = rollout
        self.reset_data = data
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
            self.calls.append(None)
            raise ValueError("The conversation is over (%s). Do not call say again." % (self.terminal or self.decision))
        text = strip_think(message or "")
        try:
            res = self._request("step", {"message": text})
        except PersuArenaError as exc:
            self.calls.append(None)
            if exc.code == "VALIDATION_ERROR":
                raise ValueError("Invalid message: %s" % exc.message)
            # The episode is over on the server (a persuadee or probe
            # failure, a broken connection): it scores nothing.
            self.done, self.failed, self.terminal = True, True, "failed"
            raise
        obs = self._observe(res)
        self.calls.append(len(self.dense) - 1)
        reply = obs.get("reply", "")
        if self.done:
            outcome = self.terminal or obs.get("decision", "")
            reply += "\n[The conversation is over. Outcome: %s.]" % outcome
        return reply

    def get_reward(self):
        """The episode's outcome reward, for TRL's environment reward
        (grpo_trainer.py:660-686): R_out from the last step;
        UNFINISHED_REWARD when the model stopped calling say before the
        persuadee decided (or Tmax); None when the episode failed (TRL
        leaves a None out of the reward)."""
        if self.failed:
            return None
        if not self.done or self.r_out is None:
            return UNFINISHED_REWARD
        return self.r_out

    def __del__(self):
        try:
            self._close_socket()
        except Exception:
            pass


def dense_reward(environments, **kwargs):
    """TRL reward function: each episode's dense return sum_t r_t (the
    belief gained, B_T - B_0 when no probe is missing; missing r_t count 0),
    read from the environments TRL passes (grpo_trainer.py:1629-1631); None for a failed episode. Weight it by lambda in
    GRPOConfig.reward_weights; get_reward adds R_out with weight 1."""
    out = []
    for env in environments:
        out.append(None if env.failed else sum(r for r in env.dense if r is not None))
    return out
