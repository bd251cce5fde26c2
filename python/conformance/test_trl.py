"""persuarena.trl against the real TRL (trl-v1.9.0 or trl-f2cd577 on
PYTHONPATH; run.py runs this module once per folder).

What runs for real: ``GRPOTrainer`` as the base class of
``grouped_trainer()`` and ``probe_rpo_trainer()``, its loss
(``_compute_loss``) on the per-token advantages probe_rpo_output makes
from PersuArenaEnv episodes played against the persuarena binary under
test, its ``get_off_policy_mask`` and ``get_gamma_weights``, the
``RepeatSampler`` that orders dataset-less placeholder rows into groups,
and the async GRPO rollout worker's sample type.

Stand-ins, each for what cannot run here:
- ``GRPOTrainer.__init__`` and the generation part of
  ``_generate_and_score_completions`` need transformers' Trainer and a
  model: trainer objects are made with ``object.__new__`` and given the
  attributes those set (each named where it is set), and the episodes are
  played by calling PersuArenaEnv.reset and say in TRL's order
  (grpo_trainer.py:2276-2333 at v1.9.0);
- ``_get_per_token_logps_and_entropies`` (a model forward) returns fixed
  log-probabilities that require grad;
- accelerate on one process: ``gather_object``, ``gather`` and
  ``reduce`` are the identity;
- import-time placeholders for transformers, accelerate, vLLM, datasets,
  pandas, pyarrow, ... (torch is Debian's 1.13).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import types
import unittest

import _harness

_harness.setup(("pandas", "pyarrow", "torch.distributed._tensor"), {"transformers": "5.13.0", "vllm": "0.24.0"})

import accelerate.utils  # noqa: E402  (a placeholder)
import torch  # noqa: E402
from trl import GRPOTrainer  # noqa: E402
from trl.trainer.grpo_config import GRPOConfig  # noqa: E402
from trl.trainer.utils import RepeatSampler  # noqa: E402

import persuarena.trl as pt  # noqa: E402
from persuarena.client import SyncPersuArenaEnv  # noqa: E402

LINES = _harness.SCRIPT_LINES
ROOT = _harness.ROOT


def new(cls, **attrs):
    """An instance of cls without its __init__ (which needs transformers'
    Trainer), with attrs set."""
    obj = object.__new__(cls)
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


class TRLTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = _harness.server("--scenarios", "arena,p4g", "--max-sessions", "16")
        os.environ["PERSUARENA_URL"] = cls.srv.ws_url
        os.environ["PERSUARENA_REWARD"] = "both"
        accelerate.utils.gather_object = lambda local: list(local)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def setUp(self):
        self._env = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE")}
        pt.env._DRAWS.clear()

    def tearDown(self):
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_hooks_subclass_the_real_trainer(self):
        # The factories subclass TRL's GRPOTrainer and override only the
        # method TRL calls per batch, with its signature.
        for cls in (pt.grouped_trainer(), pt.probe_rpo_trainer()):
            self.assertTrue(issubclass(cls, GRPOTrainer))
            own = {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_persuarena")}
            self.assertLessEqual(own - {"__init__"}, {"_generate_and_score_completions"})
            self.assertEqual(list(inspect.signature(GRPOTrainer._generate_and_score_completions).parameters),
                             ["self", "inputs"])
        self.assertTrue(issubclass(pt.probe_rpo_trainer(), pt.grouped_trainer().__mro__[1]))

    def play(self, rows):
        """PersuArenaEnv episodes in TRL's order: reset(**row) for each row,
        then say until done (the model's tool calls)."""
        envs = []
        for row in rows:
            env = pt.PersuArenaEnv()
            env.reset(**row)
            for k in range(10):
                if env.done:
                    break
                env.say(LINES[k % len(LINES)])
            envs.append(env)
        return envs

    def test_loss_takes_per_turn_advantages(self):
        # probe_rpo_output's (B, T) advantages through TRL's own loss: at
        # ratio 1 the grpo loss's gradient on each model token's
        # log-probability is -A_{b,t} / (tokens of row b) / B, so each turn's
        # tokens are pushed by that turn's advantage.
        rows = [dict(seed=7, split="train", scenario_id="arena-train-0029", prompt=[{"role": "user", "content": ""}])] * 2
        rows += [dict(seed=11, split="train", prompt=[{"role": "user", "content": ""}])] * 2
        envs = self.play(rows)
        # completion_mask * tool_mask of each rollout: a run of 3 model tokens
        # per say call, 2 tool-result tokens after each, then padding.
        width = 5 * 10
        cm, tm = [], []
        for env in envs:
            c, t = [], []
            for _ in env.calls:
                c += [1] * 5
                t += [1, 1, 1, 0, 0]
            cm.append(c + [0] * (width - len(c)))
            tm.append(t + [1] * (width - len(t)))
        Sub = pt.probe_rpo_trainer()
        tr = new(Sub, environments=envs, num_generations=2, num_generations_eval=2,
                 model=types.SimpleNamespace(training=True),
                 accelerator=types.SimpleNamespace(process_index=0, num_processes=1, gather=lambda x: x,
                                                   reduce=lambda x, reduction="sum": x),
                 state=types.SimpleNamespace(global_step=0))
        out = {"completion_mask": torch.tensor(cm), "tool_mask": torch.tensor(tm),
               "advantages": torch.zeros(4)}
        out = pt.probe_rpo_output(tr, out, 0.5, "scaled")
        adv = out["advantages"]
        self.assertEqual(tuple(adv.shape), (4, width))
        want = pt.turn_advantages(pt.rollout_traces(envs), 2, 0.5, "scaled")
        for b, env in enumerate(envs):
            for k, turn in enumerate(env.calls):
                self.assertAlmostEqual(float(adv[b, 5 * k]), want[b][1][turn], places=6)
        # GRPOTrainer.__init__ sets these from GRPOConfig (loss_type grpo,
        # beta 0, token-level importance sampling, no vLLM, no entropy bonus).
        logps = torch.full((4, width), -1.0, requires_grad=True)
        tr.__dict__.update(
            loss_type="grpo", beta=0.0, epsilon_low=0.2, epsilon_high=0.2, importance_sampling_level="token",
            top_entropy_quantile=1.0, off_policy_mask_threshold=None, use_vllm=False, aux_loss_enabled=False,
            _entropy_bonus_enabled=False, current_gradient_accumulation_steps=1, args=types.SimpleNamespace(delta=None),
            _metrics={"train": __import__("collections").defaultdict(list)},
            _get_per_token_logps_and_entropies=lambda *a, **k: (logps, torch.zeros_like(logps), None))
        inputs = dict(out, prompt_ids=torch.ones(4, 3, dtype=torch.long), prompt_mask=torch.ones(4, 3, dtype=torch.long),
                      completion_ids=torch.ones(4, width, dtype=torch.long))
        loss = GRPOTrainer._compute_loss(tr, None, inputs)
        loss.backward()
        mask = out["completion_mask"] * out["tool_mask"]
        for b in range(4):
            n = int(mask[b].sum())
            for t in range(width):
                want_g = -float(adv[b, t]) * int(mask[b, t]) / n / 4
                self.assertAlmostEqual(float(logps.grad[b, t]), want_g, places=6)

    def test_refused_configs(self):
        # The options' names are GRPOConfig's fields.
        fields = {f.name for f in dataclasses.fields(GRPOConfig)}
        self.assertLessEqual({"use_liger_kernel", "loss_type", "off_policy_mask_threshold"}, fields)
        base = dict(use_liger_kernel=False, loss_type="grpo", off_policy_mask_threshold=None)
        Sub = pt.probe_rpo_trainer()
        for bad in ({"use_liger_kernel": True}, {"loss_type": "vespo"}, {"loss_type": "luspo"},
                    {"off_policy_mask_threshold": 0.5}):
            cfg = new(GRPOConfig, **dict(base, **bad))
            with self.subTest(**bad), self.assertRaises(ValueError) as cm:
                Sub(model="m", reward_funcs=[pt.dense_reward], args=cfg)
            self.assertIn(next(iter(bad)), str(cm.exception))
        for ok in ("grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo"):
            pt.check_config(new(GRPOConfig, **dict(base, loss_type=ok)))
        # Why: TRL's off-policy mask and VESPO weights are per sequence by
        # construction, (B, 1); per-token advantages make them per token.
        adv = torch.tensor([[1.0, -1.0, 1.0]])
        lp = torch.zeros(1, 3)
        self.assertEqual(tuple(GRPOTrainer.get_off_policy_mask(adv[:, :1], lp, lp - 1, torch.ones(1, 3), 0.5).shape),
                         (1, 1))
        self.assertEqual(tuple(GRPOTrainer.get_off_policy_mask(adv, lp, lp - 1, torch.ones(1, 3), 0.5).shape), (1, 3))
        self.assertEqual(tuple(GRPOTrainer.get_gamma_weights(adv, lp, torch.ones(1, 3), None).shape), (1, 3))

    def test_dataset_less_groups(self):
        # TRL without a train_dataset builds generation_batch_size //
        # num_generations placeholder rows of an empty prompt
        # (grpo_trainer.py:859-860) and the RepeatSampler orders them into
        # groups of num_generations; each step's batch is sliced across the
        # processes (grpo_trainer.py:1245-1262). Two processes, two rows per
        # device per step, two steps per generation, G = 2.
        G, P, per_device, steps = 2, 2, 2, 2
        placeholder = [{"prompt": [{"role": "user", "content": ""}]}] * (per_device * P * steps // G)
        order = list(RepeatSampler(placeholder, mini_repeat_count=G, batch_size=len(placeholder), repeat_count=1,
                                   shuffle=True, seed=42))
        self.assertEqual(len(order), per_device * P * steps)
        Sub = pt.grouped_trainer()
        seeded = {}
        for p in range(P):
            local = [order[s * P * per_device + p * per_device + j] for s in range(steps) for j in range(per_device)]
            tr = new(Sub, environment_factories={None: pt.PersuArenaEnv}, num_generations=G,
                     model=types.SimpleNamespace(training=True),
                     args=types.SimpleNamespace(per_device_train_batch_size=per_device),
                     accelerator=types.SimpleNamespace(process_index=p, num_processes=P))
            rows = tr._persuarena_seeded([dict(placeholder[i]) for i in local])
            os.environ["RANK"], os.environ["WORLD_SIZE"] = str(p), str(P)
            for idx, row, env in zip(local, rows, self.play(rows)):
                st = env._state()
                seeded.setdefault(idx, []).append((row["seed"], st["scenario_id"], st["rollout"]))
        self.assertEqual(len(seeded), len(placeholder))
        for idx, group in seeded.items():
            self.assertEqual(len(group), G)
            self.assertEqual(len({(s, sc) for s, sc, _ in group}), 1, group)  # one seed, one scenario
            self.assertEqual(len({r for _, _, r in group}), G, group)  # G persuadees
        self.assertEqual(len({g[0][1] for g in seeded.values()}), len(placeholder))  # groups differ
        # The plain trainer passes the placeholder row as is: refused.
        with self.assertRaises(ValueError) as cm:
            pt.PersuArenaEnv().reset(**placeholder[0])
        self.assertIn("grouped_trainer", str(cm.exception))

    def test_async_grpo_takes_one_advantage_per_sample(self):
        # The experimental AsyncGRPOTrainer's rollout worker computes one
        # advantage per sample (a float), so it cannot take A_{i,t}: the
        # docs give it as outcome-only (PersuArenaEnv.get_reward).
        from trl.experimental.async_grpo import async_rollout_worker as w

        field = {f.name: f for f in dataclasses.fields(w.RolloutSample)}["advantage"]
        self.assertIn(field.type, (float, "float"))
        with open(os.path.join(ROOT, "integrations", "trl", "README.md"), encoding="utf-8") as f:
            self.assertTrue("AsyncGRPOTrainer" in f.read(), "integrations/trl/README.md does not mention AsyncGRPOTrainer")

    def test_plain_session_still_resets(self):
        # A row with a seed (train_grpo.py's dataset) needs no trainer hook.
        with SyncPersuArenaEnv(self.srv.base_url) as c:
            self.assertEqual(c.metadata()["name"], "persuarena")
        env = pt.PersuArenaEnv()
        text = env.reset(seed=3, split="train", prompt=[{"role": "user", "content": ""}])
        self.assertIn("Your proposal:", text)


class _Episode:
    """An episode as probe_rpo_output reads it from PersuArenaEnv
    (get_reward, dense, calls; calls None: not recorded)."""

    def __init__(self, reward, dense, calls=None):
        self._reward, self.dense = reward, dense
        if calls is not None:
            self.calls = calls

    def get_reward(self):
        return self._reward


class ProbeRPOOutputTest(unittest.TestCase):
    """probe_rpo_output on trainer objects of probe_rpo_trainer() (real
    GRPOTrainer base, real torch): the (B, T) advantages from tool
    rollouts shaped as _generate_and_score_completions returns them
    (completion_mask and tool_mask (B, T), advantages (B,))."""

    def setUp(self):
        self.others = []  # the traces of process 0 when this is process 1
        self._gather = accelerate.utils.gather_object
        accelerate.utils.gather_object = lambda local: self.others + list(local)

    def tearDown(self):
        accelerate.utils.gather_object = self._gather

    def run_output(self, envs, masks, process_index=0, shuffle_seed=None):
        tr = new(pt.probe_rpo_trainer(), environments=envs, num_generations=2, num_generations_eval=2,
                 model=types.SimpleNamespace(training=True), state=types.SimpleNamespace(global_step=3),
                 accelerator=types.SimpleNamespace(process_index=process_index))
        out = {"completion_mask": torch.tensor([[1 if m is not None else 0 for m in row] for row in masks]),
               "tool_mask": torch.tensor([[m if m is not None else 1 for m in row] for row in masks]),
               "advantages": torch.zeros(len(masks)), "num_items_in_batch": 7}
        out = pt.probe_rpo_output(tr, out, 0.5, "scaled", shuffle_seed)
        self.assertEqual(out["num_items_in_batch"], 7)
        return out["advantages"].tolist()

    def assertRow(self, got, want):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, places=6)

    def test_per_turn_advantages(self):
        # Two groups of G = 2; rollout 0 has 2 turns and a closing message
        # (3 runs of model tokens), rollout 1 one turn, rollout 2 a missing
        # r_t; None marks padding (completion_mask 0, tool_mask 1).
        envs = [_Episode(3.0, [0.25, 0.5]), _Episode(-1.0, [0.125]), _Episode(1.0, [0.5, None]),
                _Episode(1.0, [0.25, 0.25])]
        masks = [[1, 1, 0, 0, 1, 0, 1, 1, None], [1, 1, 1, 0, 0, None, None, None, None],
                 [1, 0, 1, 1, 0, None, None, None, None], [1, 1, 0, 1, 0, 0, None, None, None]]
        got = self.run_output(envs, masks)
        want = []
        for g in (0, 2):
            a_out, _, a = pt.group_advantages([envs[g].get_reward(), envs[g + 1].get_reward()],
                                              [envs[g].dense, envs[g + 1].dense], 0.5, "scaled")
            want += list(zip(a_out, a))
        (o0, a0), (o1, a1), (o2, a2), (o3, a3) = want
        self.assertRow(got[0], [a0[0], a0[0], 0, 0, a0[1], 0, o0, o0, 0])
        self.assertRow(got[1], [a1[0]] * 3 + [0] * 6)
        self.assertRow(got[2], [a2[0], 0, a2[1], a2[1], 0, 0, 0, 0, 0])
        self.assertRow(got[3], [a3[0], a3[0], 0, a3[1], 0, 0, 0, 0, 0])
        self.assertNotAlmostEqual(a0[0], a0[1])  # per turn, not one value per completion

    def test_rejected_call_keeps_turns_aligned(self):
        # Rollout 0's second say call was rejected (no turn played): its run
        # of tokens gets A_out, and the third run, which played turn 1, gets
        # A_{0,1}, not the closing message's A_out.
        envs = [_Episode(3.0, [0.25, 0.5], calls=[0, None, 1]), _Episode(-1.0, [0.125], calls=[0])]
        got = self.run_output(envs, [[1, 0, 1, 0, 1, 1, 0, 1], [1, 0, 0, 0, 0, 0, 0, 0]])
        a_out, _, a = pt.group_advantages([3.0, -1.0], [[0.25, 0.5], [0.125]], 0.5, "scaled")
        self.assertRow(got[0], [a[0][0], 0, a_out[0], 0, a[0][1], a[0][1], 0, a_out[0]])
        self.assertRow(got[1], [a[1][0]] + [0] * 7)

    def test_groups_span_processes(self):
        # Process 1 of 2 with one rollout each: the group's other rollout
        # comes from process 0 through gather_object.
        self.others = [(3.0, [0.25, 0.5], None)]
        got = self.run_output([_Episode(-1.0, [0.125])], [[1, 0, 0]], process_index=1)
        _, _, a = pt.group_advantages([3.0, -1.0], [[0.25, 0.5], [0.125]], 0.5, "scaled")
        self.assertRow(got[0], [a[1][0], 0, 0])

    def test_shuffled_control(self):
        # shuffle_seed: the dense rewards are shuffled across the batch's
        # groups with step_seed(seed, global_step) before the advantages.
        envs = [_Episode(3.0, [0.25, 0.5]), _Episode(-1.0, [0.125]), _Episode(1.0, [0.5, 0.75]), _Episode(1.0, [0.25])]
        got = self.run_output(envs, [[1, 0, 1, 0], [1, 0, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]], shuffle_seed=99)
        dense = pt.shuffle_dense([[envs[0].dense, envs[1].dense], [envs[2].dense, envs[3].dense]], pt.step_seed(99, 3))
        self.assertEqual(dense, [[[0.5, 0.75], [0.25]], [[0.25, 0.5], [0.125]]])
        for g in (0, 1):
            _, _, a = pt.group_advantages([envs[2 * g].get_reward(), envs[2 * g + 1].get_reward()], dense[g])
            self.assertRow([got[2 * g][0], got[2 * g][2]], a[0])
            self.assertAlmostEqual(got[2 * g + 1][0], a[1][0], places=6)

    def test_bad_lambda(self):
        with self.assertRaises(ValueError):
            pt.probe_rpo_trainer()(probe_rpo_lambda=-1)


if __name__ == "__main__":
    unittest.main()
