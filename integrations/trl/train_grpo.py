"""Train an LLM persuader with TRL's GRPOTrainer against ``persuarena serve``.

Each dataset row carries a ``seed``; the server draws the row's scenario
from it, so the ``num_generations`` completions of one row are rollouts of
one scenario: a GRPO group (Probe-RPO paper). Defaults follow the Probe-RPO
paper's Table 3 (G = 4 rollouts per scenario, 16 scenarios per step,
learning rate 1e-5, KL beta 0.05, entropy bonus 0.01, 2 epochs); see
docs/grpo.md. Tested against TRL v1.9.0 and main f2cd577
(python/conformance/test_trl.py).

With ``--advantage per-turn`` (the default) it trains with the Probe-RPO
advantage A_{i,t} = A_out,i + lambda * A_dense,i,t on each persuader turn
(persuarena.trl.probe_rpo_trainer); with ``--advantage episode`` TRL's own
GRPO advantage of R_out + lambda * sum_t r_t, one per completion.

Needs: pip install ./python trl "transformers>=5.2.0" jmespath datasets
(GRPOTrainer's environment_factory refuses older transformers and needs
jmespath; a model whose chat template supports tool calling). Start the
server first; see README.md.
"""

import argparse
import os

SYSTEM_PROMPT = (
    "You are a persuader in a conversation with another person about a proposal. "
    "Listen to their concerns, answer them with honest information and concrete plans, "
    "and respect their right to decide. Never deceive or pressure. "
    "Speak only through the say tool, one message per turn, until they decide."
)


def dataset_columns(n, split):
    """The training set's columns: n rows with seeds 0..n-1. The prompt is
    the system prompt and an empty user message: TRL appends reset()'s
    scenario text to the last prompt message, which must therefore be the
    user's, not the system prompt."""
    return {
        "prompt": [[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": ""}] for _ in range(n)],
        "seed": list(range(n)),
        "split": [split] * n,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="Qwen/Qwen3-4B-Instruct-2507", help="policy model (the Probe-RPO paper uses Qwen3-4B-Instruct-2507)")
    ap.add_argument("--url", default=os.environ.get("PERSUARENA_URL", "ws://127.0.0.1:8000/ws"))
    ap.add_argument("--reward", default="both", choices=["dense", "outcome", "both"], help="server reward mode per episode (logged as env.rewards)")
    ap.add_argument("--advantage", default="per-turn", choices=["per-turn", "episode"], help="Probe-RPO per-turn advantage, or TRL's per-completion one")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.5, help="weight of the dense term (Probe-RPO paper, Table 9: 0.5)")
    ap.add_argument("--dense-mode", default="scaled", help="dense advantage mode (docs/grpo.md), per-turn only")
    ap.add_argument("--scenarios", type=int, default=1468, help="dataset rows (scenario seeds); the Probe-RPO paper trains on 1,468")
    ap.add_argument("--split", default="train", help="scenario split the server draws from")
    ap.add_argument("--output-dir", default="persuarena-grpo")
    ap.add_argument("--num-generations", type=int, default=4, help="G, rollouts per scenario (Table 3)")
    ap.add_argument("--scenarios-per-step", type=int, default=16, help="scenarios per optimiser step (Table 3)")
    ap.add_argument("--epochs", type=float, default=2)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--beta", type=float, default=0.05, help="KL coefficient to the reference policy")
    ap.add_argument("--entropy-coef", type=float, default=0.01, help="entropy bonus (Table 3; GRPOConfig.entropy_coef)")
    ap.add_argument("--max-completion-length", type=int, default=4096, help="tokens for the whole multi-turn episode")
    args = ap.parse_args()

    # The environment class reads its configuration from the environment,
    # because TRL constructs it without arguments.
    os.environ["PERSUARENA_URL"] = args.url
    os.environ["PERSUARENA_REWARD"] = args.reward

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from persuarena.trl import PersuArenaEnv, dense_reward, probe_rpo_trainer

    dataset = Dataset.from_dict(dataset_columns(args.scenarios, args.split))
    config = GRPOConfig(
        output_dir=args.output_dir,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.num_generations * args.scenarios_per_step,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        beta=args.beta,
        entropy_coef=args.entropy_coef,
        max_completion_length=args.max_completion_length,
        log_completions=True,
        # dense_reward's weight; PersuArenaEnv.get_reward (R_out) is added
        # by TRL with weight 1.
        reward_weights=[args.lam],
    )
    common = dict(model=args.model, train_dataset=dataset, reward_funcs=[dense_reward], args=config,
                  environment_factory=PersuArenaEnv)
    if args.advantage == "per-turn":
        trainer = probe_rpo_trainer()(probe_rpo_lambda=args.lam, dense_mode=args.dense_mode, **common)
    else:
        trainer = GRPOTrainer(**common)
    trainer.train()


if __name__ == "__main__":
    main()
