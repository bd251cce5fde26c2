"""The persuarena agent loop through verl v0.9.0's call sequence, against
an in-process ``persuarena serve``.

The server is adapter_server's: server/adapters_test.go's in-process one
(go test ./server), or one launched from the persuarena binary.

The replay follows verl-project/verl 1dda039b9c6311889a9c9a26040677e1254814f9:
AgentLoopWorkerTQ._run_prompt starts rollout.n agent loops per prompt with
session_id 0..n-1 (verl/trainer/ppo/v1/agent_loop_tq.py:107-128);
_run_agent_loop instantiates the registered class with hydra
(verl/experimental/agent_loop/agent_loop.py:647-664) and awaits
``run(sampling_params, **row)``; _agent_loop_postprocess stores
``output.as_dict()`` (agent_loop_tq.py:150-196); the trainer's
_compute_advantage reads rm_scores as token_level_scores
(verl/trainer/ppo/v1/trainer_base.py:1638-1680) and calls the estimator
(verl/trainer/ppo/ray_trainer.py:250-279). The stand-ins are in
verl_standin.py.
"""

import asyncio
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import adapter_server  # noqa: E402
import verl_standin as vs  # noqa: E402

# Four lines that win arena-train-0029 at seed 7 at turn 4 with rollout 0
# (_support.SCRIPT_LINES, server/openenv_test.go scriptLines).
from _support import SCRIPT_LINES as LINES  # noqa: E402

SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}


class RegistrationTest(unittest.TestCase):
    def setUp(self):
        self.saved = vs.install()

    def tearDown(self):
        vs.uninstall(self.saved)

    def test_register(self):
        import persuarena.verl as pv
        from persuarena.verl import agent_loop

        self.assertTrue(pv.register())
        self.assertTrue(pv.register())  # twice is harmless
        self.assertEqual(vs._agent_loop_registry["persuarena"],
                         {"_target_": "persuarena.verl.agent_loop.PersuArenaAgentLoop"})
        self.assertIs(vs.ADV_ESTIMATOR_REGISTRY["probe_rpo"], pv.compute_probe_rpo_advantage)
        cls = agent_loop.PersuArenaAgentLoop
        self.assertTrue(issubclass(cls, vs.AgentLoopBase))
        self.assertTrue(issubclass(cls._output_cls, vs.AgentLoopOutput))

    def test_without_verl(self):
        vs.uninstall(self.saved)
        for n in vs.NAMES:
            sys.modules[n] = None  # import verl... raises ImportError
        try:
            import persuarena.verl as pv
            self.assertFalse(pv.register())
        finally:
            for n in vs.NAMES:
                sys.modules.pop(n, None)
            self.saved = vs.install()


def run_group(row, n, url, response_length=4096, lines=LINES):
    """AgentLoopWorkerTQ._run_prompt for one row: n agent loops, session_id
    0..n-1; returns their outputs, as_dict fields and the engines."""
    tok = vs.FakeTokenizer()

    async def one(i):
        engine = vs.ScriptedEngine(tok, lines)
        cfg = dict(vs._agent_loop_registry["persuarena"], url=url)
        loop = vs.instantiate(cfg, trainer_config=vs.trainer_config(response_length), server_manager=engine,
                              tokenizer=tok, processor=None, hf_model_type=None, dataset_cls=None,
                              data_config=vs.SimpleNamespace(config={}), tools=None)
        kwargs = {"raw_prompt": row["prompt"], "extra_info": row["extra_info"], "index": row["extra_info"]["index"],
                  "uid": "uid-0", "session_id": i, "data_source": row["data_source"], "global_steps": 1,
                  "reward_model": row["reward_model"]}
        out = await loop.run(dict(SAMPLING), **kwargs)
        return out, out.as_dict(), engine

    async def all_():
        return await asyncio.gather(*[one(i) for i in range(n)])

    return asyncio.run(all_())


class AgentLoopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        adapter_server.start(cls)
        cls.saved = vs.install()
        import persuarena.verl as pv
        from persuarena.verl import dataset

        pv.register()
        cls.pv, cls.dataset = pv, dataset

    @classmethod
    def tearDownClass(cls):
        vs.uninstall(cls.saved)
        adapter_server.stop(cls)

    def row(self):
        obs = asyncio.run(self.dataset.fetch(self.url, "train", 7, "arena-train-0029"))
        self.assertEqual(obs["scenario"]["id"], "arena-train-0029")
        row = self.dataset.make_row(obs, "train", 7)
        self.assertEqual(row["agent_name"], "persuarena")
        self.assertEqual(row["extra_info"]["persuarena"], {"scenario_id": "arena-train-0029", "split": "train", "seed": 7})
        return row

    def test_episode_group(self):
        row = self.row()
        tok = vs.FakeTokenizer()
        results = run_group(row, 4, self.url)
        for i, (out, field, engine) in enumerate(results):
            ef = out.extra_fields
            from persuarena.verl.agent_loop import FIELDS
            self.assertEqual(set(ef), set(FIELDS) | {"turn_scores", "tool_rewards"})
            n_turns = len(ef["persuarena_dense"])
            self.assertEqual(ef["persuarena_rollout"], i)
            self.assertEqual((ef["persuarena_scenario_id"], ef["persuarena_seed"]), ("arena-train-0029", 7))
            self.assertTrue(ef["persuarena_episode_id"].startswith("ep-"))
            self.assertEqual(ef["persuarena_reward_mode"], "both")
            self.assertIn(ef["persuarena_terminal"], ("accept", "conditional", "reject", "pending"))
            self.assertEqual(ef["persuarena_error"], "")
            # beliefs B_0..B_T and r_t = B_t - B_{t-1}
            b = ef["persuarena_beliefs"]
            self.assertEqual(len(b), n_turns + 1)
            for t, r in enumerate(ef["persuarena_dense"]):
                self.assertAlmostEqual(r, b[t + 1] - b[t], places=9)
            # one engine call per persuader turn, each on the whole conversation so far
            self.assertEqual(len(engine.calls), n_turns)
            self.assertEqual(len({c[0] for c in engine.calls}), 1)
            for k in range(1, n_turns):
                self.assertEqual(engine.calls[k][1][: len(engine.calls[k - 1][1])], engine.calls[k - 1][1])
            # spans: each persuader turn's tokens, mask 1, decoding to its line
            mask, resp = out.response_mask, out.response_ids
            self.assertEqual(len(mask), len(resp))
            spans = ef["persuarena_spans"]
            self.assertEqual(len(spans), n_turns)
            self.assertEqual([list(s) for s in self.pv.turn_spans(mask)], spans)
            for t, (s, e) in enumerate(spans):
                self.assertEqual(tok.decode(resp[s:e], skip_special_tokens=True), LINES[t % len(LINES)])
                self.assertEqual(resp[e - 1], vs.END)
            # environment tokens (the persuadee's replies, their role headers
            # and the next generation prompt) carry mask 0
            env = [k for k, m in enumerate(mask) if not m]
            self.assertTrue(env and env[-1] == len(mask) - 1)
            env_text = tok.decode([resp[k] for k in env], skip_special_tokens=True)
            self.assertGreater(len(env_text), 20)
            self.assertFalse(any(line in env_text for line in LINES))
            self.assertEqual(out.response_logprobs, [(-0.25 if m else 0.0) for m in mask])
            self.assertEqual(out.prompt_ids, tok.render(row["prompt"], add_generation_prompt=True))
            self.assertEqual(out.num_turns, 2 * n_turns + 1)
            # reward_score is R_out (no judge: R_goal); as_dict's rm_scores
            # carry it on the last token and r_t on each turn's first token
            self.assertEqual(out.reward_score, ef["persuarena_r_out"])
            self.assertEqual(out.reward_score, {"accept": 3.0, "conditional": 1.0, "reject": -3.0, "pending": -1.0}[ef["persuarena_terminal"]])
            rm = field["rm_scores"]
            self.assertEqual(rm[-1], out.reward_score)
            for (s, _), r in zip(spans, ef["persuarena_dense"]):
                self.assertEqual(rm[s], r)
            self.assertAlmostEqual(sum(rm), out.reward_score + sum(ef["persuarena_dense"]), places=9)
            self.assertEqual(ef["turn_scores"][:-1], ef["persuarena_dense"][:-1])
        first = results[0][0].extra_fields
        self.assertEqual((first["persuarena_terminal"], len(first["persuarena_dense"])), ("accept", 4))

        # The estimator over the group's stored rows (right-padded, as the
        # trainer reads them) gives grpo.AnalyzeParts' A_{i,t} on each turn.
        width = max(len(f["rm_scores"]) for _, f, _ in results)
        rewards = [f["rm_scores"] + [0.0] * (width - len(f["rm_scores"])) for _, f, _ in results]
        masks = [f["response_mask"] + [0] * (width - len(f["response_mask"])) for _, f, _ in results]
        got = self.pv.token_advantages(rewards, masks, ["uid-0"] * 4)
        _, _, want = self.pv.group_advantages([o.reward_score for o, _, _ in results],
                                              [o.extra_fields["persuarena_dense"] for o, _, _ in results])
        for b, (out, _, _) in enumerate(results):
            for (s, e), a in zip(out.extra_fields["persuarena_spans"], want[b]):
                self.assertTrue(all(abs(x - a) < 1e-12 for x in got[b][s:e]))
            self.assertTrue(all(x == 0 for x, m in zip(got[b], masks[b]) if not m))

    def test_verl_08_tokens(self):
        # On verl 0.8's base (apply_chat_template, no ct_* helpers) the same
        # episode gives the same tokens and masks as on 0.9's.
        from persuarena.verl import agent_loop

        row = self.row()
        (want, _, _), = run_group(row, 1, self.url)
        tok = vs.FakeTokenizer()
        old = agent_loop.build(vs.AgentLoopBaseV08, vs.AgentLoopOutput)
        try:
            loop = old(trainer_config=vs.trainer_config(), server_manager=vs.ScriptedEngine(tok, LINES), tokenizer=tok,
                       processor=None, dataset_cls=None, data_config=vs.SimpleNamespace(config={}), url=self.url)
            got = asyncio.run(loop.run(dict(SAMPLING), raw_prompt=row["prompt"], extra_info=row["extra_info"],
                                       index=7, uid="uid-0", session_id=0))
        finally:
            agent_loop.build(vs.AgentLoopBase, vs.AgentLoopOutput)
        self.assertFalse(hasattr(loop, "ct_build_initial_tokens"))
        self.assertEqual((got.prompt_ids, got.response_ids, got.response_mask, got.response_logprobs),
                         (want.prompt_ids, want.response_ids, want.response_mask, want.response_logprobs))
        self.assertEqual(got.extra_fields["persuarena_terminal"], "accept")

    def test_response_length_cut(self):
        row = self.row()
        (out, field, _), = run_group(row, 1, self.url, response_length=300)
        ef = out.extra_fields
        self.assertEqual(ef["persuarena_terminal"], "unfinished")
        self.assertEqual(out.reward_score, -1.0)
        self.assertLessEqual(len(out.response_mask), 300)
        spans = self.pv.turn_spans(out.response_mask)
        self.assertNotEqual(spans[-1][0], len(out.response_mask) - 1)
        self.assertEqual(len(ef["persuarena_dense"]), len(spans))
        r_out, dense, _ = self.pv.decode_token_rewards(field["rm_scores"], field["response_mask"])
        self.assertEqual((r_out, dense), (-1.0, ef["persuarena_dense"]))

    def test_timeout_fails_episode(self):
        # A persuader message with "[slow]" makes the test server's
        # persuadee take 3 s; with timeout_s 0.5 the step times out, the
        # episode ends as failed and its R_out reads as missing.
        adapter_server.need_slow(self)
        row = self.row()
        tok = vs.FakeTokenizer()
        vs._agent_loop_registry["persuarena-slow"] = dict(vs._agent_loop_registry["persuarena"], timeout_s=0.5)
        try:
            saved = vs._agent_loop_registry["persuarena"]
            vs._agent_loop_registry["persuarena"] = vs._agent_loop_registry["persuarena-slow"]
            (out, field, _), = run_group(row, 1, self.url, lines=[LINES[0], "[slow] " + LINES[1]])
        finally:
            vs._agent_loop_registry["persuarena"] = saved
            del vs._agent_loop_registry["persuarena-slow"]
        ef = out.extra_fields
        self.assertEqual(ef["persuarena_terminal"], "failed")
        self.assertIn("TIMEOUT", ef["persuarena_error"])
        self.assertEqual(len(ef["persuarena_beliefs"]), 2)
        self.assertEqual(len(ef["persuarena_spans"]), 2)
        self.assertIsNone(ef["persuarena_dense"][1])
        self.assertEqual(tok.decode(out.response_ids[ef["persuarena_spans"][1][0]:], skip_special_tokens=True), "[slow] " + LINES[1])
        r_out, dense, _ = self.pv.decode_token_rewards(field["rm_scores"], field["response_mask"])
        self.assertIsNone(r_out)
        self.assertEqual(dense, ef["persuarena_dense"])

    def test_full_server_retries(self):
        # A server at capacity refuses the episode's session
        # (CAPACITY_REACHED); the loop backs off and retries, and gets in
        # once a slot is free (here freed during its back-off sleep).
        from persuarena.client import SyncPersuArenaEnv
        from persuarena.verl import agent_loop

        row = self.row()
        held = [SyncPersuArenaEnv(self.url).connect() for _ in range(self.capacity)]
        for h in held:
            h.reset(seed=1)
        sleeps = []

        async def fake_sleep(delay):
            sleeps.append(delay)
            held.pop().disconnect()

        real = agent_loop.asyncio.sleep
        agent_loop.asyncio.sleep = fake_sleep
        try:
            (out, _, _), = run_group(row, 1, self.url)
        finally:
            agent_loop.asyncio.sleep = real
            for h in held:
                h.disconnect()
        self.assertEqual(sleeps[0], 1.0)
        self.assertEqual(out.extra_fields["persuarena_terminal"], "accept")

    def test_unreachable_server_raises(self):
        row = {"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
               "extra_info": {"index": 0, "persuarena": {"seed": 1}}, "data_source": "persuarena",
               "reward_model": {}}
        from persuarena.verl.agent_loop import PersuArenaError

        vs._agent_loop_registry["persuarena"]["retries"] = 1
        try:
            with self.assertRaises(PersuArenaError) as cm:
                run_group(row, 1, "ws://127.0.0.1:9/ws")
        finally:
            del vs._agent_loop_registry["persuarena"]["retries"]
        self.assertEqual(cm.exception.code, "EXECUTION_ERROR")
        self.assertIn("CONNECTION", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
