"""OpenEnv packaging against the launched server: `openenv validate
--url`'s checks, MCP tools over HTTP and WebSocket, the manifest AutoEnv
reads, and (in CI's wheel venv) the bundled binary and console script.

The Go conformance test (server/openapi_test.go, TestOpenEnvValidate)
replays the same checks in-process; these run them against the binary a
user installs."""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import unittest
import urllib.error
import urllib.request

from _support import SCRIPT_LINES, SCRIPT_RESET, server_or_skip

import persuarena
from persuarena import _bin
from persuarena import client as pc
from persuarena.client import HTTPPersuArenaEnv, MCPError, ServerError, parse_result


def manifest():
    """persuarena/openenv.yaml as a dict (flat `key: value` lines; OpenEnv
    reads it with yaml.safe_load, which gives the same for this file)."""
    text = (importlib.resources.files("persuarena") / "openenv.yaml").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            k, _, v = line.partition(":")
            v = v.strip()
            out[k.strip()] = int(v) if v.isdigit() else v
    return out


class ManifestTest(unittest.TestCase):
    def test_manifest_fields(self):
        m = manifest()
        self.assertEqual((m["spec_version"], m["name"], m["type"], m["port"]), (1, "persuarena", "space", 8000))
        self.assertTrue(m["app"].startswith("persuarena serve"))
        # AutoEnv's class lookup (src/openenv/auto/_discovery.py:296-320 at
        # 385de5e): module persuarena.client, client class inferred from
        # the name, action/observation classes from the manifest.
        self.assertIs(getattr(pc, "PersuarenaEnv"), pc.PersuArenaEnv)
        self.assertTrue(hasattr(pc, m["action"]) and hasattr(pc, m["observation"]))

    @unittest.skipUnless(os.environ.get("PERSUARENA_EXPECT_WHEEL"), "only from an installed wheel")
    def test_distribution(self):
        # AutoEnv lists distributions named openenv-*, module name = the
        # rest (_discovery.py:345-375).
        d = importlib.metadata.distribution("openenv-persuarena")
        self.assertEqual(d.version, persuarena.__version__)
        self.assertEqual(d.metadata["Name"].replace("openenv-", "").replace("-", "_"), "persuarena")
        eps = [e for e in d.entry_points if e.group == "console_scripts"]
        self.assertEqual([(e.name, e.value) for e in eps], [("persuarena", "persuarena.__main__:main")])


class BundledTest(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("PERSUARENA_EXPECT_WHEEL"), "only from an installed platform wheel")
    def test_bundled_binary_and_console_script(self):
        b = _bin.bundled_binary()
        self.assertIsNotNone(b, "the platform wheel must bundle persuarena/bin/persuarena")
        env = {k: v for k, v in os.environ.items() if k != "PERSUARENA_BIN"}
        old = os.environ.pop("PERSUARENA_BIN", None)
        try:
            self.assertEqual(_bin.find_binary(), b)
        finally:
            if old is not None:
                os.environ["PERSUARENA_BIN"] = old
        script = os.path.join(os.path.dirname(sys.executable), "persuarena")
        self.assertTrue(os.path.isfile(script), script)
        out = subprocess.run([script, "serve", "--help"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("--max-sessions", out.stdout)
        # The console script exits with the binary's status.
        bad = subprocess.run([script, "no-such-command"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 1, bad.stderr)
        # One version: the bundled server reports the distribution's.
        with pc.launch(binary=b) as srv:
            self.assertEqual(HTTPPersuArenaEnv(srv.base_url).metadata()["version"],
                             importlib.metadata.version("openenv-persuarena"))

    def test_no_binary_message(self):
        old = {k: os.environ.pop(k, None) for k in ("PERSUARENA_BIN",)}
        try:
            with self.assertRaises(_bin.BinaryNotFound):
                _bin.find_binary("/nonexistent/persuarena")
        finally:
            for k, v in old.items():
                if v is not None:
                    os.environ[k] = v


def _http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server_or_skip(cls)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def test_openenv_validate_checks(self):
        # huggingface/OpenEnv 385de5e, src/openenv/cli/_validation.py:129-426,
        # the six criteria of validate_running_environment.
        base = self.srv.base_url
        st, doc = _http("GET", base + "/openapi.json")
        self.assertEqual(st, 200)
        self.assertIsInstance(doc["info"]["version"], str)
        self.assertTrue(doc["info"]["version"].startswith("1."))  # profile openenv-http/1.x
        self.assertEqual(_http("GET", base + "/health"), (200, {"status": "healthy"}))
        st, meta = _http("GET", base + "/metadata")
        self.assertTrue(st == 200 and isinstance(meta["name"], str) and isinstance(meta["description"], str))
        st, sch = _http("GET", base + "/schema")
        self.assertTrue(st == 200 and all(isinstance(sch[k], dict) for k in ("action", "observation", "state")))
        st, rpc = _http("POST", base + "/mcp", {})
        self.assertEqual((st, rpc["jsonrpc"], rpc["error"]["code"]), (200, "2.0", -32600))
        paths = doc["paths"]
        self.assertTrue("/reset" in paths and "/step" in paths and "/state" in paths)  # mode simulation

    def test_mcp_http_episode(self):
        env = HTTPPersuArenaEnv(self.srv.base_url)
        init = env.mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}})
        self.assertEqual((init["protocolVersion"], init["serverInfo"]["name"]), ("2025-06-18", "persuarena"))
        self.assertEqual([t["name"] for t in env.list_tools()], ["reset", "say"])
        first = parse_result(env.call_tool("reset", **SCRIPT_RESET))
        ep = first.observation.episode_id
        rs = [parse_result(env.call_tool("say", message=line, episode_id=ep)) for line in SCRIPT_LINES]
        self.assertEqual([r.observation.turn for r in rs], [1, 2, 3, 4])
        self.assertTrue(rs[-1].done)
        self.assertEqual(rs[-1].observation.terminal, "accept")
        # The same episode over /reset and /step: the same rewards.
        with HTTPPersuArenaEnv(self.srv.base_url) as h:
            h.reset(**SCRIPT_RESET)
            self.assertEqual([h.step(line).reward for line in SCRIPT_LINES], [r.reward for r in rs])
        with self.assertRaises(ServerError) as cm:
            env.call_tool("say", message="More?", episode_id=ep)
        self.assertEqual(cm.exception.code, "EXECUTION_ERROR")
        with self.assertRaises(MCPError) as cm:
            env.call_tool("step", message="x")
        self.assertEqual(cm.exception.code, -32602)

    def test_mcp_ws_sync_and_async(self):
        with self.srv.sync_client() as env:
            self.assertEqual(len(env.list_tools()), 2)
            r = parse_result(env.call_tool("reset", **SCRIPT_RESET))
            for line in SCRIPT_LINES:
                r = parse_result(env.call_tool("say", message=line))
            st = env.state()  # the Gym-style state of the MCP-played episode
            self.assertEqual((st.step_count, st.terminal, st.episode_id), (4, "accept", r.observation.episode_id))

        async def run():
            async with self.srv.client() as env:
                await env.call_tool("reset", seed=2)
                out = await env.call_tool("say", message="What would help you decide? It is your call.")
                return out

        self.assertEqual(parse_result(asyncio.run(run())).observation.turn, 1)


if __name__ == "__main__":
    unittest.main()
