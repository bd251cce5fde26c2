"""A stand-in for the part of verifiers.v1 that persuarena.verifiers uses,
written from PrimeIntellect-ai/verifiers a60a606ecc4d309247edf9ff92c3eabca362781f
(verifiers is not installable here). It keeps the rules the adapter must
obey:

- verifiers/v1/agent.py:163-215, Interaction.turn: a prompted task speaks
  first: the first turn must be bare (``turn()``), a later one must carry
  the user message; a run past the agent's max_turns returns a terminated
  Segment; Segment.last_reply is the assistant text;
- agent.py:422-484, Agent.interaction: an async context manager; leaving
  it closes the rollout, and scoring runs then;
- verifiers/v1/task.py:179-247, Task.score: reward hooks (``@vf.reward``,
  weighted) and metric hooks (``@vf.metric``) are called with ``trace``
  and recorded on it;
- verifiers/v1/utils/loaders.py:96-121, _plugin_class: the taskset module
  exports exactly one Taskset and one Env subclass through ``__all__``;
  loaders.py:184-188 and :302-321, load_environment(resolve_env_config(
  data)) builds that Env with the taskset config narrowed by id.

``install(policy)`` registers it as ``verifiers`` / ``verifiers.v1``;
``policy(messages)`` plays the model: it gets the conversation so far and
returns the assistant text.
"""

from __future__ import annotations

import importlib
import sys
import types
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

A, B, C = TypeVar("A"), TypeVar("B"), TypeVar("C")


def _defaults(cls):
    out = {}
    for klass in reversed(cls.__mro__):
        for name in getattr(klass, "__annotations__", {}):
            if not name.startswith("_") and hasattr(klass, name):
                out[name] = getattr(klass, name)
    return out


class _Model:
    """pydantic-ish: annotated class defaults, keyword fields, model_copy."""

    def __init__(self, **kw):
        import copy
        for k, v in _defaults(type(self)).items():
            setattr(self, k, copy.deepcopy(v))
        for k, v in kw.items():
            setattr(self, k, v)

    def model_copy(self, update=None):
        new = type(self)(**vars(self))
        for k, v in (update or {}).items():
            setattr(new, k, v)
        return new


class State(_Model):
    pass


class TaskConfig(_Model):
    pass


class TaskData(_Model):
    idx: Any = None
    prompt: Any = None
    system_prompt: Any = None


class AgentConfig(_Model):
    harness: Any = None
    max_turns: Any = None


class TasksetConfig(_Model):
    id: str = ""
    task: Any = None


class EnvConfig(_Model):
    id: str = ""
    taskset: Any = None


def _mark(kind, weight=1.0):
    def deco(fn):
        fn._vf_kind, fn._vf_weight = kind, weight
        return fn
    return deco


def reward(func=None, weight=1.0, priority=0):
    d = _mark("reward", weight)
    return d if func is None else d(func)


def metric(func=None):
    d = _mark("metric")
    return d if func is None else d(func)


class Task(Generic[A, B, C]):
    def __init__(self, data, config=None):
        self.data, self.config = data, config

    async def score(self, trace):
        for name in dir(type(self)):
            fn = getattr(type(self), name)
            kind = getattr(fn, "_vf_kind", None)
            if kind == "reward":
                trace.rewards[name] = (await fn(self, trace), fn._vf_weight)
            elif kind == "metric":
                trace.metrics[name] = await fn(self, trace)


class Taskset(Generic[A, B]):
    def __init__(self, config):
        self.config = config

    def __iter__(self):
        return iter(self.load())


class Env(Generic[A]):
    def __init__(self, config):
        self.config = config


class Trace:
    def __init__(self, task):
        self.task = task
        self.info = {}
        self.rewards = {}
        self.metrics = {}
        self.messages = []
        self.num_turns = 0
        self.stop_reason = ""


class Segment:
    def __init__(self, messages, terminated=False):
        self.messages, self.terminated = messages, terminated

    @property
    def last_reply(self):
        for m in reversed(self.messages):
            if m["role"] == "assistant":
                return (m["content"] or "").strip()
        return ""


class Interaction:
    def __init__(self, agent, task):
        self.agent = agent
        self.trace = Trace(task)
        self._started = False
        if task.data.system_prompt:
            self.trace.messages.append({"role": "system", "content": task.data.system_prompt})
        if task.data.prompt is not None:
            self.trace.messages.append({"role": "user", "content": task.data.prompt})

    async def turn(self, message=None):
        prompted = not self._started and self.trace.task.data.prompt is not None
        if message is None and not prompted:
            raise ValueError("nothing to run a turn on")
        if message is not None and prompted:
            raise ValueError("the task's prompt opens this exchange: take its first reply with a bare turn()")
        self._started = True
        if message is not None:
            self.trace.messages.append({"role": "user", "content": message})
        if self.agent.config.max_turns is not None and self.trace.num_turns >= self.agent.config.max_turns:
            self.trace.stop_reason = "max_turns"
            return Segment([], terminated=True)
        reply = {"role": "assistant", "content": self.agent.policy(list(self.trace.messages))}
        self.trace.messages.append(reply)
        self.trace.num_turns += 1
        return Segment([reply])


class Agent:
    def __init__(self, config, policy):
        self.config, self.policy = config, policy
        self.traces = []

    @asynccontextmanager
    async def interaction(self, task):
        it = Interaction(self, task)
        try:
            yield it
        finally:
            it.trace.stop_reason = it.trace.stop_reason or "user_closed"
            await task.score(it.trace)  # scoring runs when the interaction closes
            self.traces.append(it.trace)


class Agents:
    def __init__(self, config, policy):
        self._agents = {k: Agent(v, policy) for k, v in vars(config).items() if isinstance(v, AgentConfig)}

    def __getattr__(self, name):
        return self._agents[name]


def _plugin(module, base):
    found = [getattr(module, n) for n in module.__all__
             if isinstance(getattr(module, n, None), type) and issubclass(getattr(module, n), base)]
    if len(found) != 1:
        raise TypeError("%s exports %d %s subclasses via __all__" % (module.__name__, len(found), base.__name__))
    return found[0]


def _config_param(cls, origin):
    for klass in cls.__mro__:
        for b in getattr(klass, "__orig_bases__", ()):
            if getattr(b, "__origin__", None) is origin:
                return b.__args__[-1]
    return None


def resolve_env_config(data):
    module = importlib.import_module(data["taskset"]["id"])
    ts_cfg = _config_param(_plugin(module, Taskset), Taskset)(**data["taskset"])
    env_cfg = _config_param(_plugin(module, Env), Env)
    return env_cfg(**dict(data, taskset=ts_cfg))


def load_environment(config):
    return _plugin(importlib.import_module(config.taskset.id), Env)(config)


def install():
    """Registers the stand-in as verifiers.v1 unless verifiers is installed;
    returns whether it did."""
    try:
        import verifiers.v1  # noqa: F401
        return False
    except ImportError:
        pass
    v1 = types.ModuleType("verifiers.v1")
    for name in ("State", "TaskConfig", "TaskData", "AgentConfig", "TasksetConfig", "EnvConfig", "reward", "metric",
                 "Task", "Taskset", "Env", "resolve_env_config", "load_environment"):
        setattr(v1, name, globals()[name])
    root = types.ModuleType("verifiers")
    root.v1 = v1
    sys.modules["verifiers"], sys.modules["verifiers.v1"] = root, v1
    return True
