"""persuarena.trl through TRL v1.9.0's environment_factory call order,
against an in-process ``persuarena serve``.

The server is adapter_server's: server/adapters_test.go's in-process one
(go test ./server; a message containing "[slow]" makes its persuadee take
3 s), or one launched from the persuarena binary.

Replayed from huggingface/trl f2cd57710ae345ea6428ae95363267fcf38a3dc8,
trl/trainer/grpo_trainer.py:
- __init__ (:640-686): one probe instance; its public methods other than
  reset/get_reward become tools; a get_reward method adds the reward
  source ``[e.get_reward() if type(e) is env_type else None for e in
  environments]`` with weight 1.
- _generate_and_score_completions (:2288-2333): instances drawn from a
  pool reused across batches (more created when needed), reset(**row) for
  each of the G identical rows of a group, the returned text appended to
  the last prompt message; the tool loop (:1933-2040) calls say.
- _calculate_rewards (:1612-1631): every reward function gets
  environments=self.environments.
- _compute_loss (:3026-3030): (B, T) advantages are used as they are.
"""

import inspect
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "integrations", "trl"))

import adapter_server  # noqa: E402
import fake_torch  # noqa: E402

LINES = [
    "What worries you most about this?",
    "Many people in your position found it easier than they feared; we could take it one small step at a time.",
    "It's entirely your decision. Would you like to try it once and see?",
]


def trl_append(prompt, observation):
    # _generate_and_score_completions: reset's text is appended to the
    # content of the last prompt message (a rebuilt message).
    return prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + observation}]


def env_reward_source(probe):
    # GRPOTrainer.__init__: the get_reward wrapper it appends to reward_funcs.
    env_type = type(probe)

    def get_reward(environments, _env_type=env_type, **kwargs):
        return [e.get_reward() if type(e) is _env_type else None for e in environments]

    return get_reward


class TRLTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        adapter_server.start(cls)
        import persuarena.trl as pt
        import train_grpo

        cls.pt, cls.tg = pt, train_grpo

    @classmethod
    def tearDownClass(cls):
        adapter_server.stop(cls)

    def setUp(self):
        self._env = {k: os.environ.get(k) for k in ("PERSUARENA_URL", "PERSUARENA_REWARD", "PERSUARENA_TIMEOUT", "WORLD_SIZE", "RANK")}
        os.environ["PERSUARENA_URL"] = self.url
        os.environ["PERSUARENA_REWARD"] = "both"
        for k in ("PERSUARENA_TIMEOUT", "WORLD_SIZE", "RANK"):
            os.environ.pop(k, None)

    def tearDown(self):
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_environment_factory(self):
        pe = self.pt
        probe = pe.PersuArenaEnv()
        members = dict(inspect.getmembers(probe, predicate=inspect.ismethod))
        self.assertIn("reset", members)
        self.assertIn("get_reward", members)
        tools = [n for n in members if n not in ("reset", "get_reward") and not n.startswith("_")]
        self.assertEqual(tools, ["say"])
        get_reward = env_reward_source(probe)

        lone = {"prompt": [{"role": "system", "content": "You persuade."}], "seed": 5, "split": "train"}
        with self.assertRaises(ValueError):
            probe.reset(**lone)

        cols = self.tg.dataset_columns(3, "train")
        rows = [{k: cols[k][i] for k in cols} for i in range(3)]
        G = 4
        pool = [probe]
        for batch in range(2):
            row = rows[batch]
            group = [dict(row) for _ in range(G)]  # RepeatSampler: G identical rows
            environments = []
            for i in range(G):  # the pool cursor: reuse, create when short
                if i == len(pool):
                    pool.append(pe.PersuArenaEnv())
                environments.append(pool[i])
            states = []
            for env, x in zip(environments, group):
                text = env.reset(**x)
                prompt = trl_append(x["prompt"], text)
                self.assertEqual(prompt[0], row["prompt"][0])
                self.assertTrue(prompt[-1]["role"] == "user" and prompt[-1]["content"] == text and "Your proposal:" in text)
                states.append(env._state())
            self.assertEqual([st["rollout"] for st in states], [0, 1, 2, 3])
            self.assertEqual(len({st["scenario_id"] for st in states}), 1)
            self.assertTrue(all(st["seed"] == row["seed"] for st in states))
            for env in environments:
                for i in range(10):
                    if env.done:
                        break
                    env.say(LINES[i % len(LINES)])
            # _calculate_rewards: every reward function gets environments=.
            kwargs = {"prompts": [x["prompt"] for x in group], "completions": [[] for _ in group],
                      "completion_ids": [[] for _ in group], "trainer_state": None,
                      "log_extra": lambda *a, **k: None, "log_metric": lambda *a, **k: None,
                      "seed": [x["seed"] for x in group], "split": [x["split"] for x in group]}
            dense = pe.dense_reward(environments=environments, **kwargs)
            outcome = get_reward(environments=environments, **kwargs)
            for env, d, o in zip(environments, dense, outcome):
                st = env._state()
                self.assertTrue(st["done"] and env.done and env.terminal == st["terminal"])
                self.assertFalse(env.failed)
                b = st["beliefs"]
                self.assertEqual(env.beliefs, b)
                self.assertEqual(len(env.dense), len(b) - 1)
                for t, r in enumerate(env.dense):
                    self.assertAlmostEqual(r, b[t + 1] - b[t], places=9)
                self.assertAlmostEqual(d, b[-1] - b[0], places=9)
                # no judge: R_out = R_goal; mode both: the step rewards sum to it plus the dense return
                self.assertEqual(o, st["r_goal"])
                self.assertAlmostEqual(sum(st["rewards"]), o + d, places=9)

        # Another process of a 2-process run: its rollouts interleave.
        os.environ["WORLD_SIZE"], os.environ["RANK"] = "2", "1"
        got = [pe.group_rollout({"seed": 99, "split": "train"}) for _ in range(3)]
        self.assertEqual(got, [1, 3, 5])
        for env in pool:
            env.__del__()

    def test_unfinished_and_failed(self):
        pe = self.pt
        row = {k: v[0] for k, v in self.tg.dataset_columns(1, "val").items()}
        env = pe.PersuArenaEnv()
        env.reset(**row)
        env.say(LINES[0])
        # A message the server rejects (empty once <think> is stripped)
        # plays no turn: calls records None, and the next call turn 1.
        with self.assertRaises(ValueError):
            env.say("<think>only thoughts</think>")
        env.say(LINES[1])
        self.assertEqual(env.calls, [0, None, 1])
        self.assertEqual(len(env.dense), 2)
        self.assertFalse(env.done)
        self.assertEqual(env.get_reward(), pe.UNFINISHED_REWARD)
        self.assertEqual(pe.dense_reward([env]), [env.dense[0] + env.dense[1]])
        env.__del__()

        adapter_server.need_slow(self)
        os.environ["PERSUARENA_TIMEOUT"] = "0.5"
        slow = pe.PersuArenaEnv()
        slow.reset(**row)
        with self.assertRaises(pe.PersuArenaError):
            slow.say("[slow] " + LINES[1])
        self.assertTrue(slow.failed and slow.done)
        self.assertIsNone(slow.get_reward())
        self.assertEqual(pe.dense_reward([slow]), [None])
        with self.assertRaises(ValueError):  # the model sees the conversation is over
            slow.say(LINES[2])
        slow.__del__()


class _Env:
    """An episode as probe_rpo_output reads it (calls as PersuArenaEnv.calls;
    None: not recorded)."""

    def __init__(self, reward, dense, calls=None):
        self._reward, self.dense = reward, dense
        if calls is not None:
            self.calls = calls

    def get_reward(self):
        return self._reward


class ProbeRPOTrainerTest(unittest.TestCase):
    """probe_rpo_trainer on a stand-in GRPOTrainer whose
    _generate_and_score_completions returns what v1.9.0's does for a tool
    rollout: completion_mask and tool_mask (B, T), advantages (B,)."""

    def setUp(self):
        self.saved_torch = fake_torch.install()
        self.saved = {n: sys.modules.get(n) for n in ("accelerate", "accelerate.utils")}
        acc, utils = types.ModuleType("accelerate"), types.ModuleType("accelerate.utils")
        self.others = []  # the traces of process 0 when this is process 1
        utils.gather_object = lambda local: self.others + list(local)
        acc.utils = utils
        sys.modules.update({"accelerate": acc, "accelerate.utils": utils})
        import persuarena.trl as pt

        self.pt = pt

    def tearDown(self):
        fake_torch.uninstall(self.saved_torch)
        for n, m in self.saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m

    def make(self, envs, masks, process_index=0, shuffle_seed=None):
        FT = fake_torch.FakeTensor

        class Base:
            def __init__(self, **kwargs):
                self.kwargs = kwargs
                self.num_generations, self.num_generations_eval = 2, 2
                self.model = types.SimpleNamespace(training=True)
                self.accelerator = types.SimpleNamespace(process_index=process_index)
                self.environments = envs
                self.state = types.SimpleNamespace(global_step=3)

            def _generate_and_score_completions(self, inputs):
                return {"completion_mask": FT([[1 if m is not None else 0 for m in row] for row in masks]),
                        "tool_mask": FT([[m if m is not None else 1 for m in row] for row in masks]),
                        "advantages": FT([[0.0]] * len(masks)), "num_items_in_batch": 7}

        return self.pt.probe_rpo_trainer(Base)(probe_rpo_lambda=0.5, dense_mode="scaled", shuffle_seed=shuffle_seed, model="m")

    def test_per_turn_advantages(self):
        # Two groups of G = 2; rollout 0 has 2 turns and a closing message
        # (3 runs of model tokens), rollout 1 one turn, rollout 3 a missing
        # r_t; None marks padding (completion_mask 0, tool_mask 1).
        envs = [_Env(3.0, [0.25, 0.5]), _Env(-1.0, [0.125]), _Env(1.0, [0.5, None]), _Env(1.0, [0.25, 0.25])]
        masks = [
            [1, 1, 0, 0, 1, 0, 1, 1, None],
            [1, 1, 1, 0, 0, None, None, None, None],
            [1, 0, 1, 1, 0, None, None, None, None],
            [1, 1, 0, 1, 0, 0, None, None, None],
        ]
        tr = self.make(envs, masks)
        self.assertEqual(tr.kwargs, {"model": "m"})
        out = tr._generate_and_score_completions([{}] * 4)
        self.assertEqual(out["num_items_in_batch"], 7)
        got = out["advantages"].tolist()
        want = []
        for g in (0, 2):
            a_out, _, a = self.pt.group_advantages([envs[g].get_reward(), envs[g + 1].get_reward()],
                                                   [envs[g].dense, envs[g + 1].dense], 0.5, "scaled")
            want += list(zip(a_out, a))
        (o0, a0), (o1, a1), (o2, a2), (o3, a3) = want
        self.assertEqual(got[0], [a0[0], a0[0], 0, 0, a0[1], 0, o0, o0, 0])
        self.assertEqual(got[1], [a1[0]] * 3 + [0] * 6)
        self.assertEqual(got[2], [a2[0], 0, a2[1], a2[1], 0, 0, 0, 0, 0])
        self.assertEqual(got[3], [a3[0], a3[0], 0, a3[1], 0, 0, 0, 0, 0])
        self.assertNotEqual(a0[0], a0[1])  # per-turn, not one value per completion

    def test_rejected_call_keeps_turns_aligned(self):
        # Rollout 0's second say call was rejected (no turn played): its
        # run of tokens gets A_out, and the third run, which played turn 1,
        # gets A_{0,1}, not the closing message's A_out.
        envs = [_Env(3.0, [0.25, 0.5], calls=[0, None, 1]), _Env(-1.0, [0.125], calls=[0])]
        masks = [[1, 0, 1, 0, 1, 1, 0, 1], [1, 0, 0, 0, 0, 0, 0, 0]]
        got = self.make(envs, masks)._generate_and_score_completions([{}] * 2)["advantages"].tolist()
        a_out, _, a = self.pt.group_advantages([3.0, -1.0], [[0.25, 0.5], [0.125]], 0.5, "scaled")
        self.assertEqual(got[0], [a[0][0], 0, a_out[0], 0, a[0][1], a[0][1], 0, a_out[0]])
        self.assertEqual(got[1], [a[1][0]] + [0] * 7)
        self.assertNotEqual(a[0][1], a_out[0])

    def test_groups_span_processes(self):
        # Process 1 of 2 with one rollout each: the group's other rollout
        # comes from process 0 through gather_object.
        self.others = [(3.0, [0.25, 0.5])]
        tr = self.make([_Env(-1.0, [0.125])], [[1, 0, 0]], process_index=1)
        got = tr._generate_and_score_completions([{}])["advantages"].tolist()
        _, _, a = self.pt.group_advantages([3.0, -1.0], [[0.25, 0.5], [0.125]], 0.5, "scaled")
        self.assertEqual(got, [[a[1][0], 0, 0]])

    def test_shuffled_control(self):
        # shuffle_seed: the dense rewards are shuffled across the batch's
        # groups with step_seed(seed, global_step) before the advantages.
        envs = [_Env(3.0, [0.25, 0.5]), _Env(-1.0, [0.125]), _Env(1.0, [0.5, 0.75]), _Env(1.0, [0.25])]
        masks = [[1, 0, 1, 0], [1, 0, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]]
        got = self.make(envs, masks, shuffle_seed=99)._generate_and_score_completions([{}] * 4)["advantages"].tolist()
        dense = self.pt.shuffle_dense([[envs[0].dense, envs[1].dense], [envs[2].dense, envs[3].dense]],
                                      self.pt.step_seed(99, 3))
        self.assertEqual(dense, [[[0.5, 0.75], [0.25]], [[0.25, 0.5], [0.125]]])
        for g in (0, 1):
            a_out, _, a = self.pt.group_advantages([envs[2 * g].get_reward(), envs[2 * g + 1].get_reward()], dense[g])
            self.assertEqual([got[2 * g][0], got[2 * g][2]], a[0])
            self.assertEqual(got[2 * g + 1][0], a[1][0])

    def test_bad_lambda(self):
        with self.assertRaises(ValueError):
            self.pt.probe_rpo_trainer(object)(probe_rpo_lambda=-1)


if __name__ == "__main__":
    unittest.main()
