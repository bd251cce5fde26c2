"""The persuarena server and package against the real OpenEnv
(huggingface/OpenEnv 385de5e on PYTHONPATH, with the FastAPI, Starlette,
Typer and websockets sources of ../shared/conformance/upstream/pydeps).

What runs for real: the ``openenv validate`` CLI on the running server
(``--url``) and on the environment folder integrations/openenv,
``GenericEnvClient`` (async and sync), ``MCPToolClient`` in production mode
(HTTP /mcp with OpenEnv's session methods), ``AutoEnv`` discovering the
installed openenv-persuarena distribution, and the harness's
``StepEnvSessionAdapter`` with ``MCPHarnessAdapter``. Every episode is
played against the persuarena binary under test.

Stand-ins: the harness's model step (an inference server) answers each
turn with a scripted ``say`` call; import-time placeholders for fastmcp,
mcp, huggingface_hub, openai, annotated_doc, shellingham, ... (not
reached).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.request

import _harness

# annotated_doc (FastAPI's Doc() annotations), mcp (the MCP SDK, for
# OpenEnv's FastMCP servers) and shellingham (Typer's shell detection) are
# not installed: placeholders, not reached by these tests.
STUBBED = ("annotated_doc", "mcp", "shellingham")
_harness.setup(STUBBED)

from openenv.auto import AutoEnv  # noqa: E402
from openenv.core.generic_client import GenericEnvClient  # noqa: E402
from openenv.core.harness import (  # noqa: E402
    HarnessRunLimits, MCPHarnessAdapter, ModelStepResult, StepEnvSessionAdapter)
from openenv.core.llm_client import LLMResponse, ToolCall  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402
from openenv.core.env_server.mcp_types import Tool  # noqa: E402

import persuarena  # noqa: E402
from persuarena import client as pc  # noqa: E402

LINES, RESET = _harness.SCRIPT_LINES, _harness.SCRIPT_RESET
ROOT = _harness.ROOT
ENV_DIR = os.path.join(ROOT, "integrations", "openenv")
STUB_SETUP = "import _harness; _harness.setup(%r)\n" % (STUBBED,)


def openenv_cli(*args):
    """`openenv ARGS` (openenv.cli.__main__), in a fresh process with the
    same import-time stubs; returns the CompletedProcess."""
    code = STUB_SETUP + "import sys; from openenv.cli.__main__ import main; sys.argv = ['openenv'] + sys.argv[1:]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.abspath(__file__)))


class OpenEnvTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = _harness.server("--scenarios", "arena,p4g")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def test_validate_url(self):
        out = openenv_cli("validate", "--url", self.srv.base_url)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        report = json.loads(out.stdout)
        self.assertTrue(report["passed"])
        self.assertEqual(report["summary"]["passed_count"], report["summary"]["total_count"])
        self.assertEqual(report["summary"]["total_count"], 6)
        self.assertEqual(report["mode"], "simulation")

    def test_validate_environment_folder(self):
        # What `openenv push` publishes must pass `openenv validate <dir>`.
        out = openenv_cli("validate", ENV_DIR, "--json", "--verbose")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        report = json.loads(out.stdout)
        self.assertTrue(report["passed"], report)
        modes = {c["id"]: c["passed"] for c in report["criteria"]}
        self.assertTrue(modes["deployment_mode_docker"] and modes["deployment_mode_uv_run"], modes)
        # The folder's manifest is the package's; its version the release.
        with open(os.path.join(ENV_DIR, "openenv.yaml"), encoding="utf-8") as f:
            folder_manifest = f.read()
        import importlib.resources

        self.assertEqual(folder_manifest, (importlib.resources.files("persuarena") / "openenv.yaml").read_text())
        with open(os.path.join(ENV_DIR, "pyproject.toml"), encoding="utf-8") as f:
            self.assertIn('version = "%s"' % persuarena.__version__, f.read())
        with open(os.path.join(ENV_DIR, "server", "Dockerfile"), encoding="utf-8") as f:
            self.assertIn("PERSUARENA_VERSION=v%s" % persuarena.__version__, f.read())

    def test_server_entry_runs_the_binary(self):
        # The folder's `server` entry (server/app.py main) serves on $PORT.
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, PORT=str(port), PERSUARENA_SERVE_FLAGS="--reward both")
        proc = subprocess.Popen([sys.executable, os.path.join(ENV_DIR, "server", "app.py")], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metadata" % port, timeout=2) as r:
                        meta = json.loads(r.read())
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        self.fail("server/app.py did not serve: %s" % proc.stderr.read().decode())
                    time.sleep(0.1)
            self.assertEqual((meta["name"], meta["reward"]), ("persuarena", "both"))
        finally:
            proc.terminate()
            proc.wait(15)
            proc.stderr.close()

    def test_generic_client_sync_and_async(self):
        with GenericEnvClient(base_url=self.srv.base_url).sync() as env:
            r = env.reset(**RESET)
            for line in LINES:
                r = env.step({"message": line})
            self.assertTrue(r.done)
            self.assertEqual(r.observation["metadata"]["terminal"], "accept")
            self.assertEqual(r.reward, r.observation["metadata"]["dense"] + 3)

        async def run():
            async with GenericEnvClient(base_url=self.srv.base_url) as env:
                await env.reset(seed=2)
                return await env.step({"message": "What would help you decide? It is your call."})

        self.assertEqual(asyncio.run(run()).observation["turn"], 1)

    def test_mcp_tool_client_production_mode(self):
        # Production mode talks to HTTP /mcp: openenv/session/create first,
        # tools/list and tools/call with the session_id, and
        # openenv/session/close on close (core/mcp_client.py:176-192,
        # 311-341 at 385de5e).
        async def run():
            env = MCPToolClient(base_url=self.srv.base_url)
            env.use_production_mode = True
            tools = await env.list_tools()
            first = await env.call_tool("reset", **RESET)
            results = [await env.call_tool("say", message=line) for line in LINES]
            sid = env._production_session_id
            await env.close()
            after = await MCPToolClient(base_url=self.srv.base_url)._production_mcp_request(
                "tools/list", {"session_id": sid})
            return tools, first, results, sid, after

        tools, first, results, sid, after = asyncio.run(run())
        self.assertEqual([t.name for t in tools], ["reset", "say"])
        self.assertEqual(tools[1].input_schema["required"], ["message"])
        self.assertTrue(sid.startswith("mcp-"))
        first, last = pc.parse_result(first["structuredContent"]), pc.parse_result(results[-1]["structuredContent"])
        self.assertEqual(first.observation.scenario.id, "arena-train-0029")
        self.assertEqual([pc.parse_result(r["structuredContent"]).observation.turn for r in results], [1, 2, 3, 4])
        self.assertEqual((last.done, last.observation.terminal), (True, "accept"))
        self.assertEqual(after["error"]["code"], -32602)  # closed with the client

    def test_autoenv_discovers_the_package(self):
        # AutoEnv finds the installed openenv-persuarena distribution, reads
        # its openenv.yaml and builds the client class it names.
        env = AutoEnv.from_env("persuarena", base_url=self.srv.base_url)
        self.assertIsInstance(env, pc.PersuArenaEnv)

        async def run():
            async with env:
                r = await env.reset(**RESET)
                for line in LINES:
                    r = await env.step(line)
                return r

        r = asyncio.run(run())
        self.assertEqual((r.done, r.observation.terminal, r.metadata["r_out"]), (True, "accept", 3))

    def test_harness_rollout(self):
        # OpenEnv's harness around the typed client: the model's say calls
        # become steps; the rollout ends when the persuadee decides.
        client = pc.PersuArenaEnv(self.srv.base_url)
        session = StepEnvSessionAdapter(
            client, tool_specs=[Tool(name="say", description="one persuader turn",
                                     input_schema={"type": "object", "properties": {"message": {"type": "string"}}})],
            action_builder=lambda name, args: pc.PersuArenaAction(args["message"]),
            initial_messages_builder=lambda r, task: [
                {"role": "user", "content": r.observation.scenario.brief(r.observation.tmax)}],
            reset_kwargs=dict(RESET))
        turns = []

        def model_step(messages, tools, sampling):
            # Stands in for the policy's inference server.
            turns.append([m["role"] for m in messages])
            k = len(turns) - 1
            return ModelStepResult(response=LLMResponse(
                content="", tool_calls=[ToolCall(id="c%d" % k, name="say", args={"message": LINES[k]})]))

        try:
            result = MCPHarnessAdapter().run_white_box(model_step, session, HarnessRunLimits(max_turns=10))
            verdict = session.verify(result.messages)
        finally:
            session.close()
        self.assertTrue(result.done)
        self.assertEqual(len(result.tool_trace), 4)
        self.assertTrue(result.tool_trace[-1].result.done)
        self.assertEqual(turns[0], ["user"])
        self.assertEqual((verdict.done, verdict.env_reward), (True, result.tool_trace[-1].result.metadata["reward"]))
        self.assertGreater(verdict.env_reward, 2.5)


if __name__ == "__main__":
    unittest.main()
