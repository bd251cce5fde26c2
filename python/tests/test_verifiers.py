"""persuarena.verifiers through verifiers v1's call sequence (the
stand-in in _vf_standin.py, from a60a606): plugin discovery and
load_environment, Env.start, Taskset.load, Env.run with a scripted
persuader, scoring when the interaction closes, Env.stop."""

from __future__ import annotations

import asyncio
import importlib
import sys
import unittest

import _vf_standin
from _support import SCRIPT_LINES, server_or_skip

from persuarena.client import HTTPPersuArenaEnv


class LazyImportTest(unittest.TestCase):
    def test_import_needs_no_verifiers(self):
        # The module imports with the standard library only; verifiers is
        # needed only when a class is touched.
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "verifiers" or k.startswith("verifiers.")}
        sys.modules.pop("persuarena.verifiers", None)
        try:
            m = importlib.import_module("persuarena.verifiers")
            self.assertEqual(m.utterance("<think>plan</think> Hello there. "), "Hello there.")
            self.assertNotIn("verifiers.v1", sys.modules)
        finally:
            sys.modules.update(saved)


class EpisodeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server_or_skip(cls)
        cls.standin = _vf_standin.install()
        sys.modules.pop("persuarena.verifiers", None)
        cls.pv = importlib.import_module("persuarena.verifiers")

    @classmethod
    def tearDownClass(cls):
        if cls.standin:
            sys.modules.pop("verifiers", None), sys.modules.pop("verifiers.v1", None)
        cls.srv.stop()

    def play(self, max_turns=10, **options):
        pv = self.pv
        opts = dict(url=self.srv.base_url, set="arena", split="train", scenario_id="arena-train-0029",
                    num_tasks=2, seed=7, rollouts=2, reward="both")
        opts.update(options)
        env = pv.load_environment(**opts)
        self.assertIsInstance(env, pv.PersuArenaVerifiersEnv)
        env.config.persuader.max_turns = max_turns
        tasks = list(pv.PersuArenaTaskset(env.config.taskset))
        seen = []

        def policy(messages):
            seen.append(messages)
            turn = sum(m["role"] == "assistant" for m in messages)
            return "<think>open gently</think>" + SCRIPT_LINES[turn % len(SCRIPT_LINES)]

        async def run():
            await env.start()
            agents = _vf_standin.Agents(env.config, policy)
            for t in tasks[:1]:
                await env.run(t, agents)
            await env.stop()
            return agents.persuader.traces

        return tasks, asyncio.run(run()), seen

    def test_taskset_load(self):
        tasks, _, _ = self.play()
        self.assertEqual([(t.data.seed, t.data.rollout) for t in tasks], [(7, 0), (7, 1), (8, 0), (8, 1)])
        self.assertEqual(len({t.key for t in tasks}), 4)
        self.assertTrue(all(t.data.prompt is None and t.data.system_prompt == self.pv.SYSTEM_PROMPT for t in tasks))

    def test_full_episode(self):
        _, (trace,), seen = self.play()
        rec = trace.info["persuarena"]
        # The script persuader's lines win arena-train-0029 at seed 7 at turn 4.
        self.assertEqual((rec["turns"], rec["done"], rec["terminal"], rec["r_goal"], rec["r_out"]), (4, True, "accept", 3, 3))
        self.assertEqual(rec["decisions"], ["continue", "continue", "continue", "accept"])
        self.assertEqual((rec["scenario_id"], rec["seed"], rec["rollout"]), ("arena-train-0029", 7, 0))
        self.assertEqual(len(rec["beliefs"]), 5)
        self.assertAlmostEqual(sum(rec["dense"]), rec["beliefs"][-1] - rec["beliefs"][0], places=12)
        self.assertAlmostEqual(rec["rewards"][-1], rec["dense"][-1] + 3, places=12)
        # Rubric: the outcome reward R_out; the dense sum and B_T as metrics.
        self.assertEqual(trace.rewards["outcome"], (3.0, 1.0))
        self.assertAlmostEqual(trace.metrics["dense"], sum(rec["dense"]), places=12)
        self.assertEqual(trace.metrics["final_belief"], rec["beliefs"][-1])
        # The persuader saw the brief first (public scenario only), then
        # each reply; the persuadee never got the <think> block.
        first = seen[0]
        self.assertEqual([m["role"] for m in first], ["system", "user"])
        self.assertIn("Your proposal:", first[1]["content"])
        self.assertIn("Priya Hughes", first[1]["content"])
        self.assertEqual([m["role"] for m in seen[1]], ["system", "user", "assistant", "user"])
        with self.srv.http_client() as h:
            h.reset(set="arena", scenario_id="arena-train-0029", seed=7, reward="both")
            replies = [h.step(line).observation.reply for line in SCRIPT_LINES[:3]]
        self.assertEqual([m["content"] for m in seen[3] if m["role"] == "user"][1:], replies)

    def test_start_launches_without_blocking_the_loop(self):
        # url empty: start() launches the bundled server with serve_flags,
        # the event loop running meanwhile (a ticker task keeps ticking),
        # and stop() stops it.
        env = self.pv.load_environment(url="", serve_flags=["--tmax", "3"], num_tasks=1)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        async def run():
            t = asyncio.create_task(ticker())
            await asyncio.sleep(0)
            before = ticks
            await env.start()
            during = ticks - before
            srv = env._server
            tmax = HTTPPersuArenaEnv(srv.base_url).metadata()["limits"]["tmax"]
            await env.stop()
            t.cancel()
            return during, srv, tmax

        during, srv, tmax = asyncio.run(run())
        self.assertGreater(during, 0, "the event loop was blocked while the server started")
        self.assertEqual(tmax, 3)
        self.assertFalse(srv.running())

    def test_persuader_run_ends_first(self):
        # The persuader's max_turns ends its run before the persuadee
        # decides: the episode is unfinished, the outcome is -1 (R_goal of
        # pending), and the record says so.
        _, (trace,), _ = self.play(max_turns=2)
        rec = trace.info["persuarena"]
        self.assertEqual((rec["turns"], rec["done"], rec["terminal"], rec["r_out"]), (2, False, "", None))
        self.assertEqual(trace.rewards["outcome"], (-1.0, 1.0))


if __name__ == "__main__":
    unittest.main()
