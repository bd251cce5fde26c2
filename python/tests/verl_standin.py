"""Minimal stand-ins for the parts of verl the persuarena agent loop and
estimator touch, written from verl-project/verl
1dda039b9c6311889a9c9a26040677e1254814f9 (v0.9.0); verl itself (torch,
ray, hydra, vLLM/SGLang) is not installable here.

- verl/experimental/agent_loop/agent_loop.py: AgentLoopOutput.as_dict
  (:114-159: rm_scores zeros with reward_score at the last response
  token), AgentLoopBase.__init__ (:221-252) and its ct_* helpers
  (:315-405), register and _agent_loop_registry (:437-448).
- verl/utils/tokenizer/continuous_token.py: MergeResult (:37-53),
  merge_assistant_tokens (:158-165), merge_non_assistant_tokens
  (:145-156, the appended messages rendered as a suffix plus the
  generation prompt) and align_response_metadata (:308-364: mask 1 and the
  engine's logprobs on assistant tokens, 0 on everything else).
- verl/workers/rollout/replica.py: TokenOutput (:39-51).
- verl/trainer/ppo/core_algos.py: ADV_ESTIMATOR_REGISTRY and
  register_adv_est (:113-134).

The tokenizer is a fake one: a character is one token (its code point +
ROLE_BASE), a role header and the end-of-turn mark are special tokens.
"""

import importlib
import sys
import types
from types import SimpleNamespace

END = 1
ROLE_IDS = {"system": 2, "user": 3, "assistant": 4}
ROLE_BASE = 16


class FakeTokenizer:
    pad_token_id = 0

    def encode(self, text):
        return [ord(c) + ROLE_BASE for c in text]

    def decode(self, ids, skip_special_tokens=False):
        out = []
        for i in ids:
            if i >= ROLE_BASE:
                out.append(chr(i - ROLE_BASE))
            elif not skip_special_tokens:
                out.append("<%d>" % i)
        return "".join(out)

    def render(self, messages, add_generation_prompt):
        ids = []
        for m in messages:
            ids += [ROLE_IDS[m["role"]]] + self.encode(m["content"]) + [END]
        if add_generation_prompt:
            ids.append(ROLE_IDS["assistant"])
        return ids


class MergeResult:
    def __init__(self, token_ids, appended_token_count, kind):
        self.token_ids, self.appended_token_count, self.kind = token_ids, appended_token_count, kind
        self.inserted_token_ids, self.removed_prefix_token_count = [], 0


def align(merge, mask, logprobs, assistant_logprobs=None):
    mask = list(mask)
    logprobs = list(logprobs) if logprobs is not None else None
    if logprobs is None and assistant_logprobs is not None:
        raise ValueError("response_logprobs is required when assistant_logprobs is provided")
    if merge.kind == "assistant":
        mask += [1] * merge.appended_token_count
        if logprobs is not None:
            if len(assistant_logprobs or []) != merge.appended_token_count:
                raise ValueError("assistant_logprobs length must match appended assistant token count")
            logprobs += list(assistant_logprobs)
    else:
        mask += [0] * merge.appended_token_count
        if logprobs is not None:
            logprobs += [0.0] * merge.appended_token_count
    return mask, logprobs


class AgentLoopMetrics(SimpleNamespace):
    pass


class AgentLoopOutput:
    """Stand-in for the pydantic model: the same fields and as_dict."""

    def __init__(self, prompt_ids, response_ids, response_mask, response_logprobs=None, reward_score=None,
                 num_turns=0, metrics=None, extra_fields=None, **other):
        self.prompt_ids, self.response_ids, self.response_mask = prompt_ids, response_ids, response_mask
        self.response_logprobs, self.reward_score, self.num_turns = response_logprobs, reward_score, num_turns
        self.metrics = AgentLoopMetrics(**(metrics or {}))
        self.extra_fields = extra_fields if extra_fields is not None else {}
        self.other = other

    def as_dict(self):
        out = {"prompts": list(self.prompt_ids), "responses": list(self.response_ids),
               "response_mask": list(self.response_mask), "num_turns": self.num_turns}
        if self.response_logprobs is not None:
            out["rollout_log_probs"] = list(self.response_logprobs)
        if self.reward_score is not None:
            rm = [0.0] * len(self.response_mask)
            rm[-1] = self.reward_score
            out["rm_scores"] = rm
        out["extra_fields"] = dict(self.extra_fields)
        return out


class AgentLoopBase:
    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config,
                 hf_model_type=None, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager, self.tokenizer, self.processor = server_manager, tokenizer, processor
        self.dataset_cls, self.data_config = dataset_cls, data_config.config

    async def ct_build_initial_tokens(self, messages, tools=None, images=None, videos=None, audios=None):
        return self.tokenizer.render(messages, add_generation_prompt=True)

    async def ct_merge_assistant_token(self, runtime_token_ids, assistant_token_ids, response_mask,
                                       response_logprobs=None, assistant_logprobs=None):
        merge = MergeResult(list(runtime_token_ids) + list(assistant_token_ids), len(assistant_token_ids), "assistant")
        mask, lp = align(merge, response_mask, response_logprobs, assistant_logprobs)
        return merge, mask, lp

    async def ct_merge_non_assistant_msg(self, previous_messages, updated_messages, runtime_token_ids,
                                         response_mask, response_logprobs=None, tools=None):
        assert updated_messages[: len(previous_messages)] == previous_messages, "append-only"
        appended = self.tokenizer.render(updated_messages[len(previous_messages):], add_generation_prompt=True)
        merge = MergeResult(list(runtime_token_ids) + appended, len(appended), "non_assistant")
        mask, lp = align(merge, response_mask, response_logprobs)
        return merge, mask, lp

    async def run(self, sampling_params, **kwargs):
        raise NotImplementedError


class AgentLoopBaseV08:
    """verl 0.8.0's AgentLoopBase as the loop uses it (verl-project/verl
    7aed6b230776f963fa09509c10d9c3a767d1102c, agent_loop.py:272-330): no
    Continuous Token helpers, apply_chat_template instead."""

    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager, self.tokenizer, self.processor = server_manager, tokenizer, processor

    async def apply_chat_template(self, messages, tools=None, images=None, videos=None, audios=None,
                                  mm_processor_kwargs=None, remove_system_prompt=False):
        return self.tokenizer.render(messages, add_generation_prompt=True)


_agent_loop_registry = {}


def register(agent_name):
    def decorator(subclass):
        _agent_loop_registry[agent_name] = {"_target_": "%s.%s" % (subclass.__module__, subclass.__qualname__)}
        return subclass
    return decorator


ADV_ESTIMATOR_REGISTRY = {}


def register_adv_est(name):
    def decorator(fn):
        if name in ADV_ESTIMATOR_REGISTRY and ADV_ESTIMATOR_REGISTRY[name] != fn:
            raise ValueError("Adv estimator %s has already been registered" % name)
        ADV_ESTIMATOR_REGISTRY[name] = fn
        return fn
    return decorator


NAMES = ("verl", "verl.experimental", "verl.experimental.agent_loop", "verl.experimental.agent_loop.agent_loop",
         "verl.trainer", "verl.trainer.ppo", "verl.trainer.ppo.core_algos")


def install():
    """Registers the stand-in modules under verl's names; returns the saved
    sys.modules entries for uninstall."""
    saved = {n: sys.modules.get(n) for n in NAMES}
    mods = {n: types.ModuleType(n) for n in NAMES}
    loop = mods["verl.experimental.agent_loop.agent_loop"]
    loop.AgentLoopBase, loop.AgentLoopOutput, loop.register = AgentLoopBase, AgentLoopOutput, register
    loop._agent_loop_registry = _agent_loop_registry
    algos = mods["verl.trainer.ppo.core_algos"]
    algos.ADV_ESTIMATOR_REGISTRY, algos.register_adv_est = ADV_ESTIMATOR_REGISTRY, register_adv_est
    mods["verl"].experimental, mods["verl"].trainer = mods["verl.experimental"], mods["verl.trainer"]
    mods["verl.experimental"].agent_loop = mods["verl.experimental.agent_loop"]
    mods["verl.experimental.agent_loop"].agent_loop = loop
    mods["verl.trainer"].ppo = mods["verl.trainer.ppo"]
    mods["verl.trainer.ppo"].core_algos = algos
    sys.modules.update(mods)
    return saved


def uninstall(saved):
    for n, m in saved.items():
        if m is None:
            sys.modules.pop(n, None)
        else:
            sys.modules[n] = m


def instantiate(config, **kwargs):
    """hydra.utils.instantiate for a {"_target_": "module.Class", ...} config:
    the other keys and kwargs become constructor arguments."""
    module, _, name = config["_target_"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    args = {k: v for k, v in config.items() if not k.startswith("_")}
    args.update(kwargs)
    return cls(**args)


def trainer_config(response_length=4096, prompt_length=2048):
    rollout = SimpleNamespace(response_length=response_length, prompt_length=prompt_length, n=4)
    return SimpleNamespace(config=SimpleNamespace(actor_rollout_ref=SimpleNamespace(rollout=rollout), data={}))


class ScriptedEngine:
    """The rollout engine's client: ``generate`` answers the k-th assistant
    turn of a conversation (counted in the prompt ids) with lines[k % n]
    plus the end-of-turn token, logprob -0.25 per token."""

    def __init__(self, tokenizer, lines):
        self.tok, self.lines, self.calls = tokenizer, lines, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        self.calls.append((request_id, list(prompt_ids), dict(sampling_params)))
        k = sum(1 for i in prompt_ids if i == ROLE_IDS["assistant"]) - 1
        ids = self.tok.encode(self.lines[k % len(self.lines)]) + [END]
        return SimpleNamespace(token_ids=ids, log_probs=[-0.25] * len(ids), routed_experts=None,
                               num_preempted=None, extra_fields={}, stop_reason="completed")
