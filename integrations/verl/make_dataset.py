"""Write a verl training set (Parquet) of PersuArena scenarios.

verl generates the persuader's first turn from the dataset prompt, before
the interaction answers, so each row's prompt must already describe the
public scenario. This script asks a running ``persuarena serve`` for it:
for each seed it resets an episode (the server draws the scenario from the
seed and split), reads the public scenario from the observation, closes the
session, and writes one row whose ``interaction_kwargs`` replay exactly
that scenario and seed. The hidden profile never leaves the server.

Needs: pip install websockets pandas pyarrow. Usage:

  python make_dataset.py --url ws://127.0.0.1:8000/ws --split train --n 1468 --out train.parquet
"""

import argparse
import asyncio
import json

SYSTEM_PROMPT = (
    "You are a persuader in a conversation with another person about a proposal. "
    "Listen to their concerns, answer them with honest information and concrete plans, "
    "and respect their right to decide. Never deceive or pressure. "
    "Write only your next message to them."
)


def describe(obs):
    """The public scenario as the first user message."""
    sc = obs.get("scenario") or {}

    def party(p, fallback):
        if not isinstance(p, dict):
            return fallback
        return "%s (%s)" % (p["name"], p.get("role", "")) if p.get("name") else p.get("role", fallback)

    return "\n".join([
        "You are %s. You are talking with %s." % (party(sc.get("persuader"), "the persuader"),
                                                 party(sc.get("persuadee"), "the other person")),
        "Relationship: %s (%s)." % (sc.get("relationship", ""), sc.get("closeness", "")),
        "Domain: %s (%s)." % (sc.get("domain", ""), sc.get("family", "")),
        "Your proposal: %s" % sc.get("proposal", ""),
        "Full acceptance means: %s" % sc.get("accept_means", ""),
        "Conditional acceptance means: %s" % sc.get("conditional_means", ""),
        "Background: %s" % sc.get("background", ""),
        "You have at most %s turns. Write your first message." % obs.get("tmax", "?"),
    ])


async def fetch(url, split, seed):
    try:
        from websockets.asyncio.client import connect
    except ImportError:
        from websockets import connect
    async with connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"split": split, "seed": seed}}))
        reply = json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "close"}))
    if reply.get("type") == "error":
        err = reply.get("data") or {}
        raise RuntimeError("seed %d: %s: %s" % (seed, err.get("code"), err.get("message")))
    return (reply.get("data") or {}).get("observation") or {}


def make_row(obs, split, seed, name="persuarena"):
    """One training row for the reset observation obs of (split, seed).

    ``agent_name: tool_agent`` routes the row to verl's ToolAgentLoop, the
    agent loop that calls interactions (without it verl's default
    single-turn loop runs and the interaction is never called; verl's own
    examples/data_preprocess/gsm8k_tool_agent_loop.py sets it so, at
    volcengine/verl b178a3c);
    ``extra_info["interaction_kwargs"]`` must carry the interaction's
    ``name`` (ToolAgentLoop raises without it) and replays exactly this
    scenario and seed. No rollout is given: the interaction gives each of
    a row's rollout.n trajectories its own (instance_rollout)."""
    sc = obs.get("scenario") or {}
    return {
        "data_source": "persuarena",
        "agent_name": "tool_agent",
        "prompt": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": describe(obs)}],
        "ability": "persuasion",
        "reward_model": {"style": "interaction", "ground_truth": ""},
        "extra_info": {
            "index": seed,
            "split": split,
            "scenario_id": sc.get("id", ""),
            "interaction_kwargs": {
                "name": name,
                "scenario_id": sc.get("id", ""),
                "split": split,
                "seed": seed,
            },
        },
    }


async def build(args):
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.n):
        obs = await fetch(args.url, args.split, seed)
        rows.append(make_row(obs, args.split, seed, args.name))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    ap.add_argument("--split", default="train")
    ap.add_argument("--n", type=int, default=1468, help="rows (seeds); the Probe-RPO paper trains on 1,468 scenarios")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--name", default="persuarena", help="interaction name in the interaction config")
    ap.add_argument("--out", required=True, help="output .parquet file")
    args = ap.parse_args()

    import pandas as pd

    rows = asyncio.run(build(args))
    pd.DataFrame(rows).to_parquet(args.out)
    print("wrote %d rows to %s" % (len(rows), args.out))


if __name__ == "__main__":
    main()
