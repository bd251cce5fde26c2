"""The probe_rpo estimator against Go's grpo package.

grpo/testdata/probe_rpo_groups.json is written by Go's
TestProbeRPOFixture (go test ./grpo -run TestProbeRPOFixture -update) from
grpo.AnalyzeParts and checked by it bit for bit; here every A_out, A_dense
and A of the Python transcription must match it to 1e-9.

The token-reward channel (encode/decode, the batch path) is checked here
on lists; python/conformance/test_verl.py runs the estimator through verl's
own compute_advantage on real agent-loop outputs.
"""

import json
import math
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

from persuarena.verl import advantage as adv

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
        # Turns [0, 2), [4, 5), [6, 8) of a 10-token response: r_t on each
        # turn's first token and -r_t on the token after it, MISSING_DENSE
        # for a missing r_t, R_out on the last token; the row sums to R_out.
        mask = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0]
        spans = adv.turn_spans(mask)
        self.assertEqual(spans, [(0, 2), (4, 5), (6, 8)])
        rw = adv.encode_token_rewards(len(mask), spans, [0.25, None, -0.125], 3.0)
        self.assertEqual(rw, [0.25, 0, -0.25, 0, 4.0, -4.0, -0.125, 0, 0.125, 3.0])
        self.assertEqual(math.fsum(rw), 3.0)
        r_out, dense, got_spans = adv.decode_token_rewards(rw, mask)
        self.assertEqual((r_out, dense, got_spans), (3.0, [0.25, None, -0.125], spans))
        # verl's right padding changes nothing
        self.assertEqual(adv.decode_token_rewards(rw + [0.0] * 3, mask + [0] * 3)[:2], (3.0, [0.25, None, -0.125]))
        # a row without turns is a failed episode: no R_out
        self.assertEqual(adv.decode_token_rewards([0.0] * 4, [0] * 4), (None, [], []))
        for n, sp, d in ((3, [(1, 2)], [0.1]), (4, [(0, 3)], [0.1]), (5, [(0, 1)], [1.5])):
            with self.assertRaises(ValueError):
                adv.encode_token_rewards(n, sp, d, 1.0)

    def test_altered_rewards_refused(self):
        # A pass that changes a turn's first token (a KL term) leaves it
        # unmatched by its compensation; a value outside [-1, 1] that is not
        # the missing mark cannot be an r_t.
        mask = [1, 1, 0, 0, 1, 0, 0]
        rw = adv.encode_token_rewards(len(mask), adv.turn_spans(mask), [0.25, 0.0], 1.0)
        for k, delta in ((0, -0.01), (4, -0.01)):
            bad = list(rw)
            bad[k] += delta
            with self.assertRaises(ValueError) as cm:
                adv.decode_token_rewards(bad, mask)
            self.assertIn("altered", str(cm.exception))
        bad = list(rw)
        bad[0], bad[2] = 2.0, -2.0
        with self.assertRaises(ValueError):
            adv.decode_token_rewards(bad, mask)

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
                failed = r is None or (isinstance(r, float) and math.isnan(r))
                if failed:  # the agent loop's failed episode: mask 0, rewards 0
                    mask = [0] * len(mask)
                    rewards.append([0.0] * len(mask))
                else:
                    rewards.append(adv.encode_token_rewards(len(mask), spans, row, r))
                masks.append(mask)
                index.append("uid-%d" % g)
                w = [0.0] * len(mask)
                if not failed:
                    for (s, e), a_t in zip(spans, a[i]):
                        w[s:e] = [a_t] * (e - s)
                want.append(w)
        order = sorted(range(len(index)), key=lambda b: (b % 2, b))  # interleave groups
        got = adv.token_advantages([rewards[b] for b in order], [masks[b] for b in order], [index[b] for b in order])
        for k, b in enumerate(order):
            for g_, w_ in zip(got[k], want[b]):
                self.assertLessEqual(abs(g_ - w_), 1e-12)

    def test_scalar_outcome_only_is_grpo(self):
        # Rewards with the outcome at the last token only (verl's legacy
        # trainer rebuilds them from reward_score): every r_t reads 0, the
        # dense term vanishes, A = A_out.
        masks = [[1, 1, 0, 1, 0], [1, 0, 1, 1, 0], [1, 1, 1, 0, 0]]
        r = [3.0, -1.0, 1.0]
        rewards = [[0.0] * 4 + [x] for x in r]
        got = adv.token_advantages(rewards, masks, ["u"] * 3)
        a_out = adv.outcome_advantages(r)
        for row, m, a in zip(got, masks, a_out):
            self.assertEqual(row, [a if x else 0.0 for x in m])


if __name__ == "__main__":
    unittest.main()
