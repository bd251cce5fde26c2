"""Write a verl training set (Parquet) of PersuArena scenarios.

verl generates the persuader's first turn from the dataset prompt, so
each row's prompt must already describe the public scenario. This module
asks a running ``persuarena serve`` for it:
for each seed it resets an episode (the server draws the scenario from the
seed and split), reads the public scenario from the observation, closes the
session, and writes one row whose ``extra_info["persuarena"]`` replay exactly
that scenario and seed. The hidden profile never leaves the server.

Needs: pip install pandas pyarrow. Usage:

  python -m persuarena.verl.dataset --url ws://127.0.0.1:8000/ws --split train --n 1468 --out train.parquet
"""

import argparse
import asyncio
import dataclasses

from .agent_loop import Session

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


async def fetch(url, split, seed, scenario_id=None, timeout_s=60.0):
    """The reset observation of (split, seed), or of scenario_id when given:
    its public scenario. Raises PersuArenaError for an error reply or an
    unreachable server."""
    session = await Session(url, timeout_s).open()
    opts = {"split": split, "seed": seed}
    if scenario_id:
        opts["scenario_id"] = scenario_id
    try:
        res = await session.reset(opts)
    finally:
        await session.close()
    return dataclasses.asdict(res.observation)


def make_row(obs, split, seed, agent_name="persuarena"):
    """One training row for the reset observation obs of (split, seed).

    ``agent_name`` routes the row to the ``persuarena`` agent loop (verl
    picks a row's loop by this column: verl-project/verl v0.9.0,
    verl/experimental/agent_loop/agent_loop.py:690-700);
    ``extra_info["persuarena"]`` holds the reset options that replay
    exactly this scenario and seed, and ``extra_info["index"]`` the seed
    (verl's rollout trace groups by it). No rollout is given: the agent
    loop gives each of a row's rollout.n trajectories its own."""
    sc = obs.get("scenario") or {}
    return {
        "data_source": "persuarena",
        "agent_name": agent_name,
        "prompt": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": describe(obs)}],
        "ability": "persuasion",
        "reward_model": {"style": "environment", "ground_truth": ""},
        "extra_info": {
            "index": seed,
            "split": split,
            "scenario_id": sc.get("id", ""),
            "persuarena": {"scenario_id": sc.get("id", ""), "split": split, "seed": seed},
        },
    }


async def build(args):
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.n):
        obs = await fetch(args.url, args.split, seed)
        rows.append(make_row(obs, args.split, seed, args.agent_name))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    ap.add_argument("--split", default="train")
    ap.add_argument("--n", type=int, default=1468, help="rows (seeds); the Probe-RPO paper trains on 1,468 scenarios")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--agent-name", default="persuarena", help="the agent loop's registered name")
    ap.add_argument("--out", required=True, help="output .parquet file")
    args = ap.parse_args()

    import pandas as pd

    rows = asyncio.run(build(args))
    pd.DataFrame(rows).to_parquet(args.out)
    print("wrote %d rows to %s" % (len(rows), args.out))


if __name__ == "__main__":
    main()
