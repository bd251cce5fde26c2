"""PersuArena as a verifiers environment (PrimeIntellect-ai/verifiers v1),
taskset id ``persuarena_verifiers`` (the top-level module that re-exports
this one).

The persuadee served by ``persuarena serve`` is the environment's user: the
policy under evaluation or training is the persuader, and the episode's
outcome reward is the rubric's reward. It follows verifiers' v1 API at
a60a606ecc4d309247edf9ff92c3eabca362781f (the v0 ``MultiTurnEnv`` lives on
under ``verifiers.legacy``; v1 fits, so it is not used):

- a taskset plugin (``verifiers/v1/utils/loaders.py:96-181``): the
  module ``persuarena_verifiers`` exports, through ``__all__``, one
  ``Taskset`` subclass (:data:`PersuArenaTaskset`: one task per (seed,
  rollout), its config under ``--env.taskset.*``) and one ``Env`` subclass
  (:data:`PersuArenaVerifiersEnv`), so ``--env.taskset.id
  persuarena_verifiers`` selects both. The id is a top-level module name
  because the loader probes ``find_spec("verifiers.v1.tasksets.<id>")``
  outside its try (loaders.py:70-78), which raises ModuleNotFoundError for
  a dotted id such as ``persuarena.verifiers``;
- the env scripts the user side through an interaction, as
  ``tests/v1/fixtures/echo_user_sim_v1.py`` and
  ``verifiers/v1/envs/user_sim/env.py`` do (``verifiers/v1/agent.py:138-223``,
  ``Interaction.turn``): it resets an episode over the server's WebSocket,
  hands the persuader a task whose prompt is the public scenario (a prompted
  task speaks first: a bare ``turn()`` takes its opening line), then sends
  each persuader line as a step and answers with the persuadee's reply,
  until the episode is done or the persuader's run ends;
- the dense per-turn trace (episode id, beliefs B_0..B_T, dense rewards
  r_t, step rewards, decisions, terminal state, R_goal, R_out) goes into
  ``trace.info["persuarena"]`` (``verifiers/v1/trace.py:391``, the trace's
  task-specific scratch space, serialized with the results), and the
  task's ``@vf.reward`` ``outcome`` returns R_out (``verifiers/v1/task.py:179-247``
  calls reward hooks with ``trace``); ``dense`` and ``final_belief`` are
  ``@vf.metric`` s.

verifiers is imported lazily: importing this module needs only the
standard library; the classes are built on first access (module
``__getattr__``), which imports ``verifiers.v1`` (ImportError names the
install). ``load_environment(**options)`` builds the Env through
``vf.load_environment(vf.resolve_env_config(...))``.

Example::

    eval persuarena_verifiers --env.taskset.split heldout --env.taskset.num-tasks 20

(``eval`` is verifiers v1's command; ``vf-eval`` is the legacy v0 script,
which loads v0 environments only.)
"""

from __future__ import annotations

import asyncio
import functools
import re
from typing import Any, Dict, List, Optional

from .client import PersuArenaEnv as _Client
from .client import launch

__all__ = ["PersuArenaTaskset", "PersuArenaVerifiersEnv", "load_environment"]

#: The taskset id: the top-level module persuarena_verifiers, which
#: re-exports this module's taskset and env (see the module doc).
TASKSET_ID = "persuarena_verifiers"

#: The persuader's instructions (the task's system prompt). Persuasion is
#: dual-use: the default asks for honest, respectful persuasion.
SYSTEM_PROMPT = (
    "You are the persuader in a conversation. Write only your next message to the other person: "
    "no narration, no stage directions, no analysis. Be honest and respectful: use true reasons, "
    "listen to their concerns, never pressure or deceive them, and accept that the decision is theirs."
)


def _import_vf() -> Any:
    try:
        import verifiers.v1 as vf
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("persuarena.verifiers needs verifiers (pip install verifiers): %s" % exc) from exc
    return vf


def utterance(reply: str) -> str:
    """What the persuadee hears of a persuader reply: the text without
    <think>...</think> blocks a reasoning model may emit, stripped."""
    return re.sub(r"<think>.*?</think>", "", reply or "", flags=re.DOTALL).strip()


def episode_record(results: List[Any], state: Optional[Any] = None) -> Dict[str, Any]:
    """The dense trace of one episode from its StepResults (reset first):
    episode_id, beliefs (B_0..B_T, None where unreadable), dense (r_1..r_T,
    None where missing), rewards (the step rewards), decisions, turns,
    done, terminal, r_goal and r_out (None until done), and the reward
    mode."""
    obs = [r.observation for r in results]
    last = obs[-1].metadata if obs else {}
    rec = {
        "episode_id": obs[0].episode_id if obs else "",
        "reward_mode": obs[0].metadata.get("reward_mode", "") if obs else "",
        "beliefs": [o.belief for o in obs],
        "dense": [o.dense for o in obs[1:]],
        "rewards": [r.reward for r in results[1:]],
        "decisions": [o.decision for o in obs[1:]],
        "turns": len(obs) - 1,
        "done": bool(results and results[-1].done),
        "terminal": last.get("terminal", ""),
        "r_goal": last.get("r_goal"),
        "r_out": last.get("r_out"),
    }
    if state is not None:
        rec["scenario_id"] = state.scenario_id
        rec["seed"], rec["rollout"] = state.seed, state.rollout
    return rec


@functools.lru_cache(maxsize=None)
def _classes() -> Dict[str, Any]:
    vf: Any = _import_vf()

    class PersuArenaTaskConfig(vf.TaskConfig):
        """No per-task options: rewards come from the server."""

    class PersuArenaTaskData(vf.TaskData):
        """One episode to play: the reset options (seed, rollout, set,
        split, reward mode; scenario_id to pin one). The prompt is filled
        in at run time with the public scenario the reset returns."""

        seed: int = 0
        rollout: int = 0
        set: str = ""
        split: str = ""
        scenario_id: str = ""
        reward: str = "both"

    class PersuArenaTask(vf.Task[PersuArenaTaskData, vf.State, PersuArenaTaskConfig]):
        @property
        def key(self) -> str:
            d = self.data
            return "persuarena:%s:%s:%s:%d:%d" % (d.set, d.split, d.scenario_id, d.seed, d.rollout)

        @vf.reward(weight=1.0)
        async def outcome(self, trace) -> float:
            """R_out = R_goal + w * R_strategy of the finished episode
            (Probe-RPO paper); -1 (R_goal of pending) for an episode that did
            not finish."""
            rec = trace.info.get("persuarena") or {}
            r = rec.get("r_out")
            return float(r) if r is not None else -1.0

        @vf.metric
        async def dense(self, trace) -> float:
            """Sum of the dense rewards, B_T - B_0 (missing ones count 0)."""
            rec = trace.info.get("persuarena") or {}
            return float(sum(d for d in rec.get("dense", []) if d is not None))

        @vf.metric
        async def final_belief(self, trace) -> float:
            """B_T, the persuadee's last probed belief (-1 when unreadable)."""
            rec = trace.info.get("persuarena") or {}
            b = (rec.get("beliefs") or [None])[-1]
            return float(b) if b is not None else -1.0

    class PersuArenaTasksetConfig(vf.TasksetConfig):
        """``--env.taskset.*``: the server (``url``; empty launches the
        bundled ``persuarena serve`` with ``serve_flags``), the scenario set
        and split, ``num_tasks`` episodes from seed ``seed`` up, each
        played ``rollouts`` times (rollout 0..rollouts-1, GRPO groups),
        and the reward mode; ``scenario_id`` pins one scenario (the seeds
        then vary the persuadee only)."""

        url: str = ""
        serve_flags: List[str] = []
        set: str = ""
        split: str = "train"
        scenario_id: str = ""
        num_tasks: int = 100
        seed: int = 0
        rollouts: int = 1
        reward: str = "both"
        message_timeout_s: float = 120.0

    class PersuArenaTaskset(vf.Taskset[PersuArenaTask, PersuArenaTasksetConfig]):
        def load(self):
            c = self.config
            i = 0
            for k in range(c.num_tasks):
                for r in range(c.rollouts):
                    yield PersuArenaTask(PersuArenaTaskData(
                        idx=i, seed=c.seed + k, rollout=r, set=c.set, split=c.split, reward=c.reward,
                        scenario_id=c.scenario_id,
                        system_prompt=SYSTEM_PROMPT), c.task)
                    i += 1

    class PersuArenaEnvConfig(vf.EnvConfig):
        """One seat, ``persuader`` (``--env.persuader.*``): the policy,
        on the tool-less ``null`` harness (one model call per turn) in the
        local ``subprocess`` runtime; its max_turns caps the conversation
        at the server's tmax.

        Choice: the local runtime, because the null harness runs no code
        and v1's default runtime (a Prime sandbox, configs/agent.py:29)
        would need a Prime login and a public tunnel for the model calls
        of a persuader that only talks (interception/__init__.py:34-54)."""

        persuader: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"},
                                                   max_turns=10)

    class PersuArenaVerifiersEnv(vf.Env[PersuArenaEnvConfig]):
        async def start(self):
            ts = self.config.taskset
            self._server = None
            self._url = getattr(ts, "url", "")
            if not self._url:
                # launch() blocks until the server answers (seconds):
                # in a worker thread, so the event loop keeps running.
                self._server = await asyncio.to_thread(launch, *getattr(ts, "serve_flags", []))
                self._url = self._server.base_url

        async def stop(self):
            srv, self._server = getattr(self, "_server", None), None
            if srv is not None:
                await asyncio.to_thread(srv.stop)

        async def run(self, task, agents):
            d = task.data
            opts = {k: v for k, v in (("seed", d.seed), ("rollout", d.rollout), ("set", d.set),
                                      ("split", d.split), ("scenario_id", d.scenario_id),
                                      ("reward", d.reward)) if v not in ("", None)}
            timeout = getattr(self.config.taskset, "message_timeout_s", 120.0)
            async with _Client(self._url, message_timeout_s=timeout) as env:
                results = [await env.reset(**opts)]
                first = results[0].observation
                # The persuader speaks first: a prompted task's bare turn()
                # takes its opening line (agent.py:163-171).
                brief = first.scenario.brief(first.tmax)
                prompted = type(task)(d.model_copy(update={"prompt": brief}), task.config)
                async with agents.persuader.interaction(prompted) as talk:
                    seg = await talk.turn()
                    while not seg.terminated:
                        line = utterance(seg.last_reply)
                        if not line:
                            break  # nothing to say: the episode stays unfinished
                        results.append(await env.step(line))
                        if results[-1].done:
                            break
                        seg = await talk.turn(results[-1].observation.reply)
                    # Scoring runs when the interaction closes: the record
                    # must be on the trace before.
                    talk.trace.info["persuarena"] = episode_record(results, await env.state())

    return {"PersuArenaTaskset": PersuArenaTaskset, "PersuArenaVerifiersEnv": PersuArenaVerifiersEnv,
            "PersuArenaTask": PersuArenaTask, "PersuArenaTaskData": PersuArenaTaskData,
            "PersuArenaTasksetConfig": PersuArenaTasksetConfig, "PersuArenaEnvConfig": PersuArenaEnvConfig}


def __getattr__(name: str) -> Any:
    if name in ("PersuArenaTaskset", "PersuArenaVerifiersEnv", "PersuArenaTask", "PersuArenaTaskData",
                "PersuArenaTasksetConfig", "PersuArenaEnvConfig"):
        return _classes()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def load_environment(**taskset_options: Any):
    """Builds the verifiers Env: ``taskset_options`` are the taskset
    config's fields (url, serve_flags, set, split, num_tasks, seed,
    rollouts, reward, message_timeout_s). The same as
    ``eval persuarena_verifiers --env.taskset.<option> ...``. Raises
    ImportError without verifiers."""
    vf: Any = _import_vf()
    cfg = vf.resolve_env_config({"taskset": dict(taskset_options, id=TASKSET_ID)})
    return vf.load_environment(cfg)

