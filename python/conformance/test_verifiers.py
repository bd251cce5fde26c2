"""persuarena's verifiers environment against the real verifiers v1
(PrimeIntellect-ai/verifiers a60a606 on PYTHONPATH).

What runs for real: the v1 loaders (taskset and environment resolution
from an id, verifiers/v1/utils/loaders.py), ``resolve_env_config`` and
``load_environment``, ``Env.serving`` and ``Env.run_episode`` with the
``null`` harness, the agent and interaction machinery, the eval client
(httpx) and the task's reward and metric hooks. The episode is played
against the persuarena binary under test.

Stand-ins, each for what cannot run here:
- ``ModelServer``: the inference server (an OpenAI-compatible
  /chat/completions endpoint) answering each persuader turn with a
  scripted line;
- standins/null_program.py: the ``null`` harness's program, which the
  runtime prepares with uv from PyPI (openai, mcp, httpx, tenacity): the
  same arguments and the same single chat completion, standard library
  only (``Runtime.prepare_uv_script`` is pointed at it);
- standins/openai: the openai SDK's chat completion response types
  (pydantic models with the API's field names), which v1's chat dialect
  validates each relayed response with, and its exception classes;
- standins/pydantic_config: pydantic-config's ``BaseConfig`` (a pydantic
  model that forbids unknown fields; the package is not installable);
- import-time placeholders for renderers, anthropic, prime_sandboxes,
  tenacity, math_verify, mcp, tomli_w, transformers, ... (not reached).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import _harness

_harness.setup(("renderers", "anthropic", "prime_sandboxes", "tenacity", "math_verify", "mcp", "tomli_w"),
               keep=("openai",))

import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.clients import ModelContext  # noqa: E402
from verifiers.v1.configs.client import EvalClientConfig  # noqa: E402
from verifiers.v1.envs.single_agent import SingleAgentEnv  # noqa: E402
from verifiers.v1.runtimes import base as runtime_base  # noqa: E402
from verifiers.v1.utils import loaders  # noqa: E402

import persuarena.verifiers as pv  # noqa: E402
from persuarena.client import HTTPPersuArenaEnv  # noqa: E402

LINES = _harness.SCRIPT_LINES
ROOT = _harness.ROOT
UPSTREAM = os.path.join(_harness.UPSTREAM_DIR, _harness.UPSTREAM)


class ModelServer:
    """Stands in for the inference server: POST .../chat/completions
    answers with LINES[k] after k assistant messages, wrapped in a <think>
    block the persuadee must never see."""

    def __init__(self):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                k = sum(m.get("role") == "assistant" for m in body.get("messages", []))
                reply = {"id": "cmpl-%d" % len(outer.requests), "object": "chat.completion", "created": 0,
                         "model": body.get("model", "m"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant",
                                                  "content": "<think>open gently</think>" + LINES[k % len(LINES)]}}],
                         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/v1" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


NULL_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins", "null_program.py")


async def _prepare_standin(self, script, env=None, *, activate=True):
    # Runtime.prepare_uv_script (runtimes/base.py:237-285) installs the
    # script's PyPI dependencies with uv; the stand-in needs none.
    return [sys.executable, NULL_PROGRAM]


class VerifiersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = _harness.server("--scenarios", "arena,p4g")
        cls.model = ModelServer()
        cls._prepare = runtime_base.Runtime.prepare_uv_script
        runtime_base.Runtime.prepare_uv_script = _prepare_standin

    @classmethod
    def tearDownClass(cls):
        runtime_base.Runtime.prepare_uv_script = cls._prepare
        cls.model.close()
        cls.srv.stop()

    def test_loader_resolves_the_documented_id(self):
        # The id the module documents resolves through verifiers' own
        # loader to its taskset and env, not the SingleAgentEnv fallback.
        tid = pv.TASKSET_ID
        self.assertIs(loaders.taskset_class(tid), pv.PersuArenaTaskset)
        env_cls = loaders.environment_class(tid)
        self.assertIsNot(env_cls, SingleAgentEnv)
        self.assertIs(env_cls, pv.PersuArenaVerifiersEnv)

    def test_eval_command_in_docs(self):
        # v1's command is `eval` (pyproject [project.scripts] eval =
        # verifiers.v1.cli.eval.main:main); `vf-eval` is the legacy v0
        # script. The docs give the v1 command with the resolvable id.
        with open(os.path.join(UPSTREAM, "pyproject.toml"), encoding="utf-8") as f:
            scripts = f.read()
        self.assertIn('eval = "verifiers.v1.cli.eval.main:main"', scripts)
        self.assertIn('vf-eval = "verifiers.legacy.scripts.eval:main"', scripts)
        for doc in ("docs/trainers.md", "python/README.md"):
            with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
                text = f.read()
            self.assertTrue("eval %s " % pv.TASKSET_ID in text, "%s lacks `eval %s `" % (doc, pv.TASKSET_ID))
            self.assertNotRegex(text, r"\bvf[ -]eval\b[^\n]*persuarena", doc)

    def options(self, **kw):
        opts = dict(url=self.srv.base_url, set="arena", split="train", scenario_id="arena-train-0029", num_tasks=1,
                    seed=7, rollouts=2, reward="both")
        opts.update(kw)
        return opts

    def test_load_environment(self):
        env = pv.load_environment(**self.options())
        self.assertIsInstance(env, pv.PersuArenaVerifiersEnv)
        self.assertIsInstance(env, vf.Env)
        tasks = list(env.taskset)
        self.assertEqual([(t.data.seed, t.data.rollout) for t in tasks], [(7, 0), (7, 1)])

    def test_full_rollout(self):
        env = pv.load_environment(**self.options())
        env.config.persuader.max_turns = 10
        task = next(iter(env.taskset))
        ctx = ModelContext(model="stand-in", client=EvalClientConfig(base_url=self.model.url, api_key_var="NO_KEY"))

        async def run():
            async with env.serving():
                return await env.run_episode(task, ctx)

        os.environ.setdefault("NO_KEY", "x")
        ep = asyncio.run(run())
        self.assertEqual(ep.errors, [])
        self.assertTrue(ep.ok, [(t.errors, t.stop_condition) for t in ep.traces])
        trace, = ep.traces
        rec = trace.info["persuarena"]
        # The script persuader's lines win arena-train-0029 at seed 7 at turn 4.
        self.assertEqual((rec["turns"], rec["done"], rec["terminal"], rec["r_goal"], rec["r_out"]),
                         (4, True, "accept", 3, 3))
        self.assertEqual(len(rec["beliefs"]), 5)
        self.assertAlmostEqual(sum(rec["dense"]), rec["beliefs"][-1] - rec["beliefs"][0], places=12)
        self.assertEqual(trace.reward, 3.0)
        # the model saw the public brief first, and never the hidden profile
        first = self.model.requests[0][1]["messages"]
        self.assertEqual([m["role"] for m in first], ["system", "user"])
        self.assertIn("Your proposal:", first[1]["content"])
        self.assertTrue(self.model.requests[0][0].endswith("/chat/completions"))
        self.assertEqual(len(self.model.requests), 4)
        # The persuadee got the lines without the <think> block: an HTTP
        # replay of the bare lines gives the replies the model saw.
        with HTTPPersuArenaEnv(self.srv.base_url) as h:
            h.reset(set="arena", scenario_id="arena-train-0029", seed=7, rollout=0, reward="both")
            replies = [h.step(line).observation.reply for line in LINES[:3]]
        seen = [m["content"] for m in self.model.requests[3][1]["messages"] if m["role"] == "user"][1:]
        self.assertEqual(seen, replies)
    def test_start_launches_without_blocking_the_loop(self):
        # url empty: start() launches the bundled server with serve_flags,
        # the event loop running meanwhile (a ticker task keeps ticking),
        # and stop() stops it.
        env = pv.load_environment(url="", serve_flags=["--tmax", "3"], num_tasks=1)
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


if __name__ == "__main__":
    unittest.main()
