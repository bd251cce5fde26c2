"""The probe_rpo estimator against Go's grpo package.

grpo/testdata/probe_rpo_groups.json is written by Go's
TestProbeRPOFixture (go test ./grpo -run TestProbeRPOFixture -update) from
grpo.AnalyzeParts and checked by it bit for bit; here every A_out, A_dense
and A of the Python transcription must match it to 1e-9.

verl's side is replayed from verl-project/verl
1dda039b9c6311889a9c9a26040677e1254814f9 (v0.9.0): compute_advantage in
verl/trainer/ppo/ray_trainer.py:250-279 calls a registered estimator with
token_level_rewards, response_mask, index (uid) and config, and
register_adv_est (verl/trainer/ppo/core_algos.py:116-134) stores it under
its name; agent-loop outputs become token rewards through
AgentLoopOutput.as_dict (verl/experimental/agent_loop/agent_loop.py:114-159).
"""

import json
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fake_torch  # noqa: E402

from persuarena.verl import advantage as adv  # noqa: E402

FIXTURE = os.path.join(HERE, "..", "..", "grpo", "testdata", "probe_rpo_groups.json")
SHUFFLE_FIXTURE = os.path.join(HERE, "..", "..", "grpo", "testdata", "probe_rpo_shuffle.json")


def load_fixture():
    with open(FIXTURE) as f:
        return json.load(f)


class GoldenTest(unittest.TestCase):
    def assertClose(self, got, want, what):
        self.assertEqual(len(got), len(want), what)
        for k, (g, w) in enumerate(zip(got, want)):
            if isinstance(w, list):
                self.assertClose(g, w, "%s[%d]" % (what, k))
            else:
                self.assertLessEqual(abs(g - w), 1e-9, "%s[%d]: %r, Go %r" % (what, k, g, w))

    def test_fixture_groups(self):
        cases = load_fixture()
        names = " | ".join(c["name"] for c in cases)
        self.assertGreaterEqual(len(cases), 5)
        for needle in ("dead group", "unequal lengths", "missing probes", "lambda 0", "length-only"):
            self.assertIn(needle, names)
        for c in cases:
            a_out, a_dense, a = adv.group_advantages(
                c["r_out"], c["dense"], c["lambda"], c["dense_mode"], c["eps"], c["std_ddof"])
            self.assertClose(a_out, c["want"]["a_out"], c["name"] + " a_out")
            self.assertClose(a_dense, c["want"]["a_dense"], c["name"] + " a_dense")
            self.assertClose(a, c["want"]["a"], c["name"] + " a")

    def test_lambda_zero_is_grpo(self):
        # verl's grpo (core_algos.py:268-331): (score - mean) / (torch.std + eps),
        # torch.std being the sample std.
        c = next(c for c in load_fixture() if c["name"].startswith("lambda 0"))
        r = c["r_out"]
        mean = sum(r) / len(r)
        std = math.sqrt(sum((x - mean) ** 2 for x in r) / (len(r) - 1))
        _, _, a = adv.group_advantages(r, c["dense"], 0.0, "scaled", 1e-6, 1)
        for x, row in zip(r, a):
            self.assertEqual(len(set(row)), 1)
            self.assertAlmostEqual(row[0], (x - mean) / (std + 1e-6), places=12)
        # {3, 1, -1, -3} with ddof 1: docs/grpo.md's 1.1618946 for the first.
        self.assertAlmostEqual(a[0][0], 1.1618946, places=6)

    def test_dead_group_hand(self):
        # docs/grpo.md worked example: s = sqrt(0.1/5) + 1e-6, A = 0.5 * A_dense.
        c = load_fixture()[0]
        s = math.sqrt(0.1 / 5) + 1e-6
        _, _, a = adv.group_advantages(c["r_out"], c["dense"], 0.5, "scaled", 1e-6, 0)
        self.assertAlmostEqual(a[0][0], 0.5 * 0.2 / s, places=12)
        self.assertAlmostEqual(a[1][1], -0.5 * 0.1 / s, places=12)
        self.assertEqual(a[3], [0.0])

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            adv.group_advantages([1, 2], [[0.1]], 0.5)
        with self.assertRaises(ValueError):
            adv.dense_advantages([[0.1], [0.2]], mode="belief")
        with self.assertRaises(ValueError):
            adv.outcome_advantages([float("inf"), 1])


class ShuffleTest(unittest.TestCase):
    """The belief-shuffled control against grpo.ShuffleDense's fixture
    (go test ./grpo -run TestShuffleFixture)."""

    def setUp(self):
        with open(SHUFFLE_FIXTURE) as f:
            self.fx = json.load(f)

    def test_mix_and_step_seeds(self):
        for z, want in self.fx["mix"]:
            self.assertEqual(adv.mix(int(z)), int(want))
        for seed, step, want in self.fx["step_seeds"]:
            self.assertEqual(adv.step_seed(int(seed), int(step)), int(want))

    def test_shuffle_dense(self):
        got = adv.shuffle_dense(self.fx["groups"], self.fx["seed"])
        self.assertEqual(got, self.fx["want"])
        self.assertNotEqual(got, self.fx["groups"])

    def test_pcg_reference(self):
        # Go's own reference: NewPCG(1, 2)'s first draws
        # (src/math/rand/v2/pcg_test.go TestPCG, Go 1.25's standard library).
        p = adv._PCG(1, 2)
        self.assertEqual([p.uint64() for _ in range(3)],
                         [0xc4f5a58656eef510, 0x9dcec3ad077dec6c, 0xc8d04605312f8088])

    def test_batch_shuffle(self):
        # The estimator's batch path: groups in order of first appearance,
        # dense rewards shuffled across them, then each group's advantages.
        groups = self.fx["groups"][:3]
        rewards, masks, index = [], [], []
        for g, grp in enumerate(groups):
            for i, row in enumerate(grp):
                mask = sum(([1, 0] for _ in row), []) + [0]
                rewards.append(adv.encode_token_rewards(len(mask), adv.turn_spans(mask), row, float(i - g)))
                masks.append(mask)
                index.append("g%d" % g)
        got = adv.token_advantages(rewards, masks, index, shuffle_seed=self.fx["seed"])
        shuffled = adv.shuffle_dense(groups, self.fx["seed"])
        b = 0
        for g, grp in enumerate(groups):
            _, _, a = adv.group_advantages([float(i - g) for i in range(len(grp))], shuffled[g])
            for i in range(len(grp)):
                self.assertEqual([got[b][s] for s, _ in adv.turn_spans(masks[b])], a[i])
                b += 1


class TokenChannelTest(unittest.TestCase):
    def test_round_trip(self):
        mask = [1, 1, 0, 0, 1, 0, 1, 1, 1, 0]
        spans = adv.turn_spans(mask)
        self.assertEqual(spans, [(0, 2), (4, 5), (6, 9)])
        rw = adv.encode_token_rewards(len(mask), spans, [0.25, None, -0.125], 3.0)
        self.assertEqual(rw, [0.25, 0, 0, 0, 0.0, 0, -0.125, 0, 0, 3.0])
        self.assertEqual(math.copysign(1, rw[4]), -1.0)  # missing: -0.0
        self.assertEqual(sum(rw), 3.125)  # the episode return in mode both
        r_out, dense, got_spans = adv.decode_token_rewards(rw, mask)
        self.assertEqual((r_out, dense, got_spans), (3.0, [0.25, None, -0.125], spans))
        failed = adv.encode_token_rewards(len(mask), spans, [0.25, 0.0, 0.5], None)
        self.assertIsNone(adv.decode_token_rewards(failed, mask)[0])
        self.assertEqual(adv.decode_token_rewards(failed, mask)[1], [0.25, 0.0, 0.5])
        with self.assertRaises(ValueError):
            adv.encode_token_rewards(3, [(2, 3)], [0.1], 1.0)

    def test_batch_matches_groups(self):
        # Two fixture groups interleaved in one batch, as verl's uid index
        # leaves them: each token of turn t gets the group's A_{i,t}.
        cases = [c for c in load_fixture() if c["dense_mode"] == "scaled" and c["std_ddof"] == 1][:2]
        rewards, masks, index, want = [], [], [], []
        for g, c in enumerate(cases):
            _, _, a = adv.group_advantages(c["r_out"], c["dense"], 0.5, "scaled")
            for i, (r, row) in enumerate(zip(c["r_out"], c["dense"])):
                mask = [0]
                for t in range(len(row)):
                    mask += [1] * (t + 2) + [0, 0]
                spans = adv.turn_spans(mask)
                rewards.append(adv.encode_token_rewards(len(mask), spans, row, r))
                masks.append(mask)
                index.append("uid-%d" % g)
                w = [0.0] * len(mask)
                for (s, e), a_t in zip(spans, a[i]):
                    w[s:e] = [a_t] * (e - s)
                want.append(w)
        order = sorted(range(len(index)), key=lambda b: (b % 2, b))  # interleave groups
        got = adv.token_advantages([rewards[b] for b in order], [masks[b] for b in order], [index[b] for b in order])
        for k, b in enumerate(order):
            for g_, w_ in zip(got[k], want[b]):
                self.assertLessEqual(abs(g_ - w_), 1e-12)

    def test_scalar_outcome_only_is_grpo(self):
        # Rewards with the outcome at the last token only (no dense marks):
        # every r_t reads +0, the dense term vanishes, A = A_out.
        masks = [[1, 1, 0, 1, 0], [1, 0, 1, 1, 0], [1, 1, 1, 0, 0]]
        r = [3.0, -1.0, 1.0]
        rewards = [[0.0] * 4 + [x] for x in r]
        got = adv.token_advantages(rewards, masks, ["u"] * 3)
        a_out = adv.outcome_advantages(r)
        for row, m, a in zip(got, masks, a_out):
            self.assertEqual(row, [a if x else 0.0 for x in m])


class EstimatorTest(unittest.TestCase):
    def setUp(self):
        self._saved = fake_torch.install()
        self._env = {k: os.environ.get(k) for k in ("PERSUARENA_LAMBDA", "PERSUARENA_DENSE_MODE", "PERSUARENA_SHUFFLE_SEED")}
        os.environ.pop("PERSUARENA_SHUFFLE_SEED", None)

    def tearDown(self):
        fake_torch.uninstall(self._saved)
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_estimator_call(self):
        c = next(c for c in load_fixture() if c["name"].startswith("unequal lengths"))
        rewards, masks = [], []
        for r, row in zip(c["r_out"], c["dense"]):
            mask = sum(([1, 1, 0] for _ in row), []) + [0]
            rewards.append(adv.encode_token_rewards(len(mask), adv.turn_spans(mask), row, r))
            masks.append(mask)
        width = max(len(m) for m in masks)
        rewards = [r + [0.0] * (width - len(r)) for r in rewards]  # verl's right padding
        masks = [m + [0] * (width - len(m)) for m in masks]
        for lam, mode, want in ((None, None, c["want"]["a"]), ("0", "scaled", None)):
            for k, v in (("PERSUARENA_LAMBDA", lam), ("PERSUARENA_DENSE_MODE", mode)):
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            a, ret = adv.compute_probe_rpo_advantage(fake_torch.FakeTensor(rewards), fake_torch.FakeTensor(masks), index=["u"] * 4)
            self.assertIs(a, ret)
            if want is None:  # lambda 0: A_out on every persuader token
                want = [[x] * len(row) for x, row in zip(c["want"]["a_out"], c["dense"])]
            for b, (row, m) in enumerate(zip(a.tolist(), masks)):
                turn_vals = [row[s] for s, _ in adv.turn_spans(m)]
                for g, w in zip(turn_vals, want[b]):
                    self.assertLessEqual(abs(g - w), 1e-9)
                self.assertTrue(all(x == 0 for x, mm in zip(row, m) if not mm))
        os.environ["PERSUARENA_DENSE_MODE"] = "belief"
        with self.assertRaises(ValueError):
            adv.compute_probe_rpo_advantage(fake_torch.FakeTensor(rewards), fake_torch.FakeTensor(masks), index=["u"] * 4)

    def test_estimator_shuffle_steps(self):
        # PERSUARENA_SHUFFLE_SEED: the k-th call shuffles with step_seed(seed, k).
        with open(SHUFFLE_FIXTURE) as f:
            groups = json.load(f)["groups"][:3]
        rewards, masks, index = [], [], []
        for g, grp in enumerate(groups):
            for i, row in enumerate(grp):
                mask = sum(([1, 0] for _ in row), []) + [0]
                mask += [0] * (9 - len(mask))
                rewards.append(adv.encode_token_rewards(len(mask), adv.turn_spans(mask), row, float(i)))
                masks.append(mask)
                index.append(g)
        os.environ["PERSUARENA_SHUFFLE_SEED"] = "12345"
        adv._calls = 0
        for step in range(2):
            a, _ = adv.compute_probe_rpo_advantage(fake_torch.FakeTensor(rewards), fake_torch.FakeTensor(masks), index=index)
            want = adv.token_advantages(rewards, masks, index, shuffle_seed=adv.step_seed(12345, step))
            self.assertEqual(a.tolist(), [[x * m for x, m in zip(r, mm)] for r, mm in zip(want, masks)])
        self.assertEqual(adv._calls, 2)
        os.environ["PERSUARENA_SHUFFLE_SEED"] = "-1"
        with self.assertRaises(ValueError):
            adv.settings()


if __name__ == "__main__":
    unittest.main()
