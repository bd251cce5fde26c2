"""Conformance test of the trainer adapters against a running persuarena serve.

Run by server/adapters_test.go (go test ./server), which starts the server
in-process and sets:

  PERSUARENA_URL            ws://127.0.0.1:PORT/ws
  PERSUARENA_TEST_CAPACITY  the server's --max-sessions

The server plays the simulator in reward mode "both"; a persuader message
containing "[slow]" makes its persuadee take 3 s to answer.

Each test replays the calls a trainer makes, from its current source:

- TRL GRPOTrainer, huggingface/trl f2cd57710ae345ea6428ae95363267fcf38a3dc8,
  trl/trainer/grpo_trainer.py: __init__ builds one probe instance and takes
  its public methods other than reset/get_reward as tools;
  _generate_and_score_completions draws instances from a pool reused across
  batches, calls reset(**row) for each of the G identical rows of a group
  and appends the returned text to the last prompt message; reward
  functions get environments=... .
- verl ToolAgentLoop, volcengine/verl b178a3cd56f58b2d502255daba591e92833930a7,
  verl/experimental/agent_loop/tool_agent_loop.py: start_interaction(
  request_id, **interaction_kwargs), then generate_response(request_id,
  messages, **interaction_kwargs) after each assistant turn, a non-None
  score appended to turn_scores, never finalize_interaction; the reward
  manager passes extra_info["turn_scores"] to compute_score.

Only the standard library is used. When the websockets package is not
installed, a minimal RFC 6455 client is registered under its module names
(websockets.sync.client.connect, websockets.asyncio.client.connect) so the
adapters' own code paths run unchanged.
"""

import asyncio
import base64
import inspect
import json
import os
import socket
import struct
import sys
import types
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
URL = os.environ.get("PERSUARENA_URL", "ws://127.0.0.1:8000/ws")
CAPACITY = int(os.environ.get("PERSUARENA_TEST_CAPACITY", "4"))

LINES = [
    "What worries you most about this?",
    "Many people in your position found it easier than they feared; we could take it one small step at a time.",
    "It's entirely your decision. Would you like to try it once and see?",
]


# --- a minimal WebSocket client (test only) ------------------------------


class _Closed(Exception):
    pass


class _SyncWS:
    def __init__(self, url, open_timeout=10, max_size=None):
        u = urllib.parse.urlsplit(url)
        self._sock = socket.create_connection((u.hostname, u.port or 80), timeout=open_timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n") % (u.path or "/", u.hostname, u.port or 80, key)
        self._sock.sendall(req.encode())
        self._buf = b""
        while b"\r\n\r\n" not in self._buf:
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("handshake: connection closed")
            self._buf += chunk
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError("handshake refused: %r" % head[:80])
        self._sock.settimeout(None)

    def _read(self, n):
        while len(self._buf) < n:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise _Closed("connection closed")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _frame(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        self._sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, text):
        self._frame(0x1, text.encode("utf-8"))

    def recv(self, timeout=None):
        self._sock.settimeout(timeout)
        try:
            data = b""
            while True:
                b0, b1 = self._read(2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", self._read(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._read(8))[0]
                payload = self._read(n)
                opcode = b0 & 0x0F
                if opcode == 0x8:
                    raise _Closed("closed by the server: %r" % payload[2:])
                if opcode == 0x9:
                    self._frame(0xA, payload)
                    continue
                if opcode in (0x1, 0x0):
                    data += payload
                    if b0 & 0x80:
                        return data.decode("utf-8")
        except socket.timeout:
            raise TimeoutError("no message within %s s" % timeout)
        finally:
            try:
                self._sock.settimeout(None)
            except OSError:
                pass

    def close(self):
        try:
            self._frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


class _AsyncWS:
    def __init__(self, sync):
        self._s = sync

    async def send(self, text):
        await asyncio.to_thread(self._s.send, text)

    async def recv(self):
        return await asyncio.to_thread(self._s.recv, None)

    async def close(self):
        await asyncio.to_thread(self._s.close)


class _Connect:
    """What websockets.asyncio.client.connect returns: awaitable, and an
    async context manager."""

    def __init__(self, url):
        self._url = url
        self._ws = None

    async def _open(self):
        self._ws = _AsyncWS(await asyncio.to_thread(_SyncWS, self._url))
        return self._ws

    def __await__(self):
        return self._open().__await__()

    async def __aenter__(self):
        return await self._open()

    async def __aexit__(self, *exc):
        await self._ws.close()


def _async_connect(url, max_size=None):
    return _Connect(url)


def _install_shim():
    try:
        import websockets.sync.client  # noqa: F401
        import websockets.asyncio.client  # noqa: F401
        return False
    except ImportError:
        pass
    names = ["websockets", "websockets.sync", "websockets.sync.client", "websockets.asyncio", "websockets.asyncio.client"]
    mods = {n: types.ModuleType(n) for n in names}
    mods["websockets.sync.client"].connect = _SyncWS
    mods["websockets.asyncio.client"].connect = _async_connect
    mods["websockets"].sync = mods["websockets.sync"]
    mods["websockets"].asyncio = mods["websockets.asyncio"]
    mods["websockets.sync"].client = mods["websockets.sync.client"]
    mods["websockets.asyncio"].client = mods["websockets.asyncio.client"]
    sys.modules.update(mods)
    return True


# --- TRL -----------------------------------------------------------------


def _trl_modules():
    sys.path.insert(0, os.path.join(HERE, "trl"))
    import persuarena_env
    import train_grpo
    return persuarena_env, train_grpo


def _trl_append(prompt, observation):
    # GRPOTrainer._generate_and_score_completions: the reset text is
    # appended to the content of the last prompt message.
    return prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + observation}]


def test_trl():
    pe, tg = _trl_modules()
    os.environ["PERSUARENA_URL"] = URL
    os.environ["PERSUARENA_REWARD"] = "both"
    for k in ("WORLD_SIZE", "RANK"):
        os.environ.pop(k, None)

    # __init__: the probe instance's tools.
    probe = pe.PersuArenaEnv()
    tools = [n for n, _ in inspect.getmembers(probe, predicate=inspect.ismethod)
             if n not in ("reset", "get_reward") and not n.startswith("_")]
    assert tools == ["say"], tools

    # A prompt of only the system message: reset refuses it.
    lone = {"prompt": [{"role": "system", "content": "You persuade."}], "seed": 5, "split": "train"}
    try:
        probe.reset(**lone)
        raise AssertionError("reset accepted a prompt that ends with the system message")
    except ValueError:
        pass

    # train_grpo's rows: the scenario lands in the user message.
    cols = tg.dataset_columns(3, "train")
    rows = [{k: cols[k][i] for k in cols} for i in range(3)]
    G = 4
    pool = [probe] + [pe.PersuArenaEnv() for _ in range(G - 1)]
    for batch in range(2):
        row = rows[batch]
        group = [dict(row) for _ in range(G)]  # RepeatSampler: G identical rows
        states = []
        for env, x in zip(pool, group):
            text = env.reset(**x)
            prompt = _trl_append(x["prompt"], text)
            assert prompt[0] == row["prompt"][0], "the system prompt changed"
            assert prompt[-1]["role"] == "user" and prompt[-1]["content"] == text and "Your proposal:" in text
            states.append(env._state())
        rollouts = [st["rollout"] for st in states]
        assert rollouts == [0, 1, 2, 3], rollouts
        assert len({st["scenario_id"] for st in states}) == 1, "a group must play one scenario"
        assert all(st["seed"] == row["seed"] for st in states)
        for env in pool:
            for i in range(10):
                if env.done:
                    break
                env.say(LINES[i % len(LINES)])
        rewards = pe.persuarena_reward(environments=pool)
        for env, r in zip(pool, rewards):
            st = env._state()
            assert st["done"] and env.done and env.terminal == st["terminal"], (st, env.terminal)
            want = sum(st["rewards"])
            assert abs(r - want) < 1e-9 and abs(env.reward - want) < 1e-9, (r, env.reward, want)
            assert env.beliefs[0] == st["beliefs"][0] and env.beliefs[-1] == st["beliefs"][-1]
            assert env.r_out is not None and abs(env.r_out - st["r_goal"]) < 1e-9  # no judge: R_out = R_goal

    # Another process of a 2-process run: its rollouts interleave.
    os.environ["WORLD_SIZE"], os.environ["RANK"] = "2", "1"
    try:
        got = [pe.group_rollout({"seed": 99, "split": "train"}) for _ in range(3)]
    finally:
        os.environ.pop("WORLD_SIZE"), os.environ.pop("RANK")
    assert got == [1, 3, 5], got
    for env in pool:
        env.__del__()


# --- verl ----------------------------------------------------------------


def _verl_modules():
    sys.path.insert(0, os.path.join(HERE, "verl"))
    import make_dataset
    import persuarena_interaction
    return make_dataset, persuarena_interaction


async def _agent_loop(inter, row, lines, max_user_turns=10):
    """ToolAgentLoop.run with an interaction: the calls and the
    turn_scores it collects."""
    kw = row["extra_info"]["interaction_kwargs"]
    assert "name" in kw
    request_id = os.urandom(16).hex()
    await inter.start_interaction(request_id, **kw)
    messages = list(row["prompt"])
    turn_scores = []
    for turn in range(max_user_turns):
        messages.append({"role": "assistant", "content": lines[turn % len(lines)]})
        done, reply, score, extra = await inter.generate_response(request_id, messages, **kw)
        messages.append({"role": "user", "content": reply})
        if score is not None:
            turn_scores.append(score)
        if done:
            break
    return request_id, turn_scores, messages


def test_verl():
    md, pi = _verl_modules()

    async def run():
        inter = pi.PersuArenaInteraction({"name": "persuarena", "url": URL, "reward": "both", "retries": 1, "timeout_s": 30})
        obs = (await _reset_obs(URL, "train", 11))
        row = md.make_row(obs, "train", 11)
        assert row["agent_name"] == "tool_agent"
        assert row["extra_info"]["interaction_kwargs"] == {"name": "persuarena", "scenario_id": obs["scenario"]["id"], "split": "train", "seed": 11}
        # Two batches of CAPACITY trajectories (rollout.n = CAPACITY) on a
        # server with CAPACITY slots, never finalized: the second batch
        # needs the first one's slots back (retries = 1: no waiting).
        for batch in range(2):
            results = await asyncio.gather(*[_agent_loop(inter, row, LINES) for _ in range(CAPACITY)])
            rollouts = set()
            for rid, scores, messages in results:
                ep = inter._finished[rid]
                assert ep.done and ep.ws is None and not ep.failed, "a done episode's session must be closed"
                assert rid not in inter._episodes
                rollouts.add(ep.reset_data["rollout"])
                extra_info = dict(row["extra_info"], turn_scores=scores, tool_rewards=[], num_turns=len(messages), rollout_reward_scores={})
                score = pi.compute_score(data_source="persuarena", solution_str="", ground_truth="", extra_info=extra_info)
                assert scores and abs(score - sum(ep.rewards)) < 1e-9 and abs(score - await inter.calculate_score(rid)) < 1e-9
                assert ep.terminal in ("accept", "conditional", "reject", "pending"), ep.terminal
            assert len(rollouts) == CAPACITY, rollouts
        try:
            pi.compute_score(extra_info={"index": 1})
            raise AssertionError("compute_score scored a trajectory without turn scores")
        except ValueError:
            pass

        # A step that outlives timeout_s: the episode ends as failed and no
        # later call returns the late reply.
        slow = pi.PersuArenaInteraction({"name": "persuarena", "url": URL, "reward": "both", "retries": 1, "timeout_s": 0.5})
        kw = row["extra_info"]["interaction_kwargs"]
        await slow.start_interaction("slow-1", **kw)
        msgs = list(row["prompt"]) + [{"role": "assistant", "content": LINES[0]}]
        done, first, score, _ = await slow.generate_response("slow-1", msgs, **kw)
        assert not done and first and score is not None
        msgs += [{"role": "user", "content": first}, {"role": "assistant", "content": "[slow] " + LINES[1]}]
        done, reply, score, extra = await slow.generate_response("slow-1", msgs, **kw)
        assert done and score is None and extra.get("failed"), (done, reply, score, extra)
        assert reply != first
        msgs += [{"role": "user", "content": reply}, {"role": "assistant", "content": LINES[2]}]
        done, reply2, score, extra = await slow.generate_response("slow-1", msgs, **kw)
        assert done and reply2 == "" and score is None and extra.get("failed"), (done, reply2, score, extra)
        assert "slow-1" not in slow._episodes

    asyncio.run(run())


async def _reset_obs(url, split, seed):
    # make_dataset.fetch, without its websockets import dance
    md, _ = _verl_modules()
    return await md.fetch(url, split, seed)


def main():
    shim = _install_shim()
    print("websocket client: %s" % ("stdlib shim" if shim else "websockets"))
    failed = 0
    for name, fn in [("test_trl", test_trl), ("test_verl", test_verl)]:
        try:
            fn()
            print("ok   %s" % name)
        except Exception as exc:
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL %s: %s" % (name, exc))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
