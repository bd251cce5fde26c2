"""persuarena.trl's environment class through TRL v1.9.0's
environment_factory call order, against an in-process ``persuarena
serve``: a replay of the calls GRPOTrainer makes (TRL itself is not
installed where these run; python/conformance/test_trl.py runs the trainer
hooks against the real TRL).

The server is adapter_server's: server/adapters_test.go's in-process one
(go test ./server; a message containing "[slow]" makes its persuadee take
3 s), or one launched from the persuarena binary.

Replayed from huggingface/trl v1.9.0, trl/trainer/grpo_trainer.py:
- __init__ (:640-686): one probe instance; its public methods other than
  reset/get_reward become tools; a get_reward method adds the reward
  source ``[e.get_reward() if type(e) is env_type else None for e in
  environments]`` with weight 1.
- _generate_and_score_completions (:2260-2333): instances drawn from a
  pool reused across batches (more created when needed), reset(**row) for
  each of the G identical rows of a group, the returned text appended to
  the last prompt message; the tool loop (:1933-2040) calls say.
- _calculate_rewards (:1612-1631): every reward function gets
  environments=self.environments.
"""

import inspect
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "integrations", "trl"))

import adapter_server  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
