"""PersuArena for TRL's GRPOTrainer (huggingface/trl v1.9.0 and main
f2cd577, whose grpo_trainer.py is the same; python/conformance/test_trl.py
runs against both): the environment class (``PersuArenaEnv``, for
``environment_factory``), the dense reward function (``dense_reward``),
``grouped_trainer``, a GRPOTrainer subclass that gives the rollouts of
each group one scenario when there is no dataset, and
``probe_rpo_trainer``, one that also trains with the per-turn Probe-RPO
advantage (docs/trainers.md).

TRL is imported only by the two trainer factories; the rest is standard
library. Line citations are v1.9.0's trl/trainer/grpo_trainer.py.
"""

import math

from ..verl.advantage import DEFAULT_LAMBDA, group_advantages, shuffle_dense, step_seed, turn_spans  # noqa: F401
from .env import UNFINISHED_REWARD, PersuArenaEnv, PersuArenaError, dense_reward, group_rollout, render_scenario  # noqa: F401


def rollout_traces(environments):
    """(R_out, dense, calls) of each environment's episode, as the
    estimator takes them: R_out is get_reward()'s (None for a failed
    episode), dense the per-turn r_t (None where missing), calls
    PersuArenaEnv.calls (the turn each ``say`` call played, None for a call
    that played none; None for an environment that does not record them)."""
    out = []
    for env in environments:
        calls = getattr(env, "calls", None)
        out.append((env.get_reward(), list(env.dense), None if calls is None else list(calls)))
    return out


def turn_advantages(traces, num_generations, lam=DEFAULT_LAMBDA, mode="scaled", shuffle_seed=None):
    """Per-rollout (A_out, [A_{i,t}]) for traces in TRL's order, where each
    run of num_generations consecutive rollouts is one group (TRL groups
    rewards by view(-1, num_generations), grpo_trainer.py:2684-2690). With
    shuffle_seed the dense rewards are first shuffled across the groups
    (shuffle_dense, the belief-shuffled control). Raises ValueError when
    the number of traces is not a multiple of num_generations."""
    if num_generations < 1 or len(traces) % num_generations:
        raise ValueError("%d rollouts are not groups of %d" % (len(traces), num_generations))
    groups = [traces[g: g + num_generations] for g in range(0, len(traces), num_generations)]
    dense = [[tr[1] for tr in grp] for grp in groups]
    if shuffle_seed is not None:
        dense = shuffle_dense(dense, shuffle_seed)
    out = []
    for grp, d in zip(groups, dense):
        r_out = [float("nan") if tr[0] is None else tr[0] for tr in grp]
        a_out, _, a = group_advantages(r_out, d, lam, mode)
        out.extend(zip(a_out, a))
    return out


def token_advantages(loss_mask, advantages, calls=None):
    """Rows of per-token advantages from loss_mask (completion_mask *
    tool_mask as lists: 1 on the model's tokens, 0 on tool results and
    padding) and advantages[b] = (A_out, [A_{b,t}]): the k-th run of model
    tokens is the message that made the k-th ``say`` call; with calls[b]
    (PersuArenaEnv.calls) it gets A_{b,t} for the turn t that call played
    and A_out for a call that played none (a rejected message), without
    calls[b] (None) A_{b,k}; runs after the last call (the model's closing
    message) get A_out.

    Choice: one ``say`` call per assistant message, which is how a chat
    model uses a one-tool environment; parallel calls in one message would
    shift later turns onto later runs."""
    rows = []
    for b, (mask, (a_out, a_turns)) in enumerate(zip(loss_mask, advantages)):
        c = calls[b] if calls is not None else None
        row = [0.0] * len(mask)
        for k, (s, e) in enumerate(turn_spans(mask)):
            t = k if c is None else (c[k] if k < len(c) else None)
            a = a_turns[t] if t is not None and t < len(a_turns) else a_out
            row[s:e] = [a] * (e - s)
        rows.append(row)
    return rows


def probe_rpo_output(trainer, output, lam, mode, shuffle_seed=None):
    """Replaces output["advantages"] (shape (B,), one per completion) by
    per-token Probe-RPO advantages (B, T) computed from the episodes in
    trainer.environments; GRPOTrainer's loss takes (B, T) advantages as
    they are (grpo_trainer.py:3026-3030). The traces of every
    process are gathered (accelerate's gather_object, the way TRL gathers
    its rewards) so that groups spanning processes see all their rollouts.
    With shuffle_seed (a run seed), step k = trainer.state.global_step
    shuffles with step_seed(shuffle_seed, k), the belief-shuffled control.
    Returns output; unchanged when there are no environments or no
    tool_mask (no tool was called)."""
    envs = getattr(trainer, "environments", None)
    if not envs or "tool_mask" not in output:
        return output
    import torch
    from accelerate.utils import gather_object

    traces = gather_object(rollout_traces(envs))
    g = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
    seed = None if shuffle_seed is None else step_seed(shuffle_seed, trainer.state.global_step)
    adv = turn_advantages(traces, g, lam, mode, seed)
    start = trainer.accelerator.process_index * len(envs)
    local = adv[start: start + len(envs)]
    mask = (output["completion_mask"] * output["tool_mask"]).tolist()
    old = output["advantages"]
    calls = [tr[2] for tr in traces[start: start + len(envs)]]
    output["advantages"] = torch.tensor(token_advantages(mask, local, calls), dtype=torch.float32, device=old.device)
    return output


#: The seed of the first eval group in dataset-less mode: eval rounds
#: replay the same scenarios, apart from the training seeds.
EVAL_SEED_BASE = 1 << 40


def group_seeds(n_local, per_device, process_index, num_processes, num_generations, first_seed):
    """The reset seed of each of a process's n_local rows in dataset-less
    mode: row i of the process's generation batch is global row
    (i // per_device) * num_processes * per_device + process_index *
    per_device + i % per_device (TRL slices each step's batch across the
    processes, grpo_trainer.py:1245-1262), and group g = global row //
    num_generations gets seed first_seed + g, so the num_generations
    rollouts of a group play one scenario and groups differ. Raises
    ValueError for sizes that are not positive."""
    if min(per_device, num_processes, num_generations) < 1 or n_local < 0:
        raise ValueError("group_seeds: sizes must be positive")
    out = []
    for i in range(n_local):
        row = (i // per_device) * num_processes * per_device + process_index * per_device + i % per_device
        out.append(first_seed + row // num_generations)
    return out


def _unseeded(row):
    return row.get("seed") is None and not row.get("scenario_id")


def grouped_trainer(base=None):
    """A subclass of TRL's GRPOTrainer (or of base) for PersuArenaEnv
    without a train_dataset (TRL's dataset-less mode, #6349: placeholder
    rows of an empty prompt, grpo_trainer.py:841-860). Before each batch it
    gives every row without a seed or scenario_id the seed of its group
    (group_seeds: the k-th round of the run gets seeds k * groups per round
    + group, an eval round EVAL_SEED_BASE + group), so that the
    num_generations rollouts of a group play one scenario against
    num_generations persuadees, which is what the group baseline needs.
    Rows that carry a seed or a scenario_id are left alone. A resumed run
    counts its rounds from 0 again."""
    # Choice: seeds from a count of generation rounds rather than from
    # state.global_step, which does not advance between rounds when
    # steps_per_generation < gradient_accumulation_steps (two rounds would
    # share their scenarios).
    if base is None:
        from trl import GRPOTrainer as base

    class GroupedGRPOTrainer(base):
        _persuarena_rounds = 0

        def _persuarena_seeded(self, inputs):
            if not getattr(self, "environment_factories", None) or not any(_unseeded(x) for x in inputs):
                return inputs
            training = self.model.training
            g = self.num_generations if training else self.num_generations_eval
            per_device = self.args.per_device_train_batch_size if training else self.args.per_device_eval_batch_size
            nproc = self.accelerator.num_processes
            if training:
                groups = len(inputs) * nproc // g
                first = self._persuarena_rounds * groups
                self._persuarena_rounds += 1
            else:
                first = EVAL_SEED_BASE
            seeds = group_seeds(len(inputs), per_device, self.accelerator.process_index, nproc, g, first)
            return [dict(x, seed=s) if _unseeded(x) else x for x, s in zip(inputs, seeds)]

        def _generate_and_score_completions(self, inputs):
            return super()._generate_and_score_completions(self._persuarena_seeded(inputs))

    return GroupedGRPOTrainer


def check_config(args):
    """Raises ValueError, with the reason, for a GRPOConfig under which
    TRL would not apply the per-token advantages as Probe-RPO's A_{i,t}:
    use_liger_kernel (the fused liger loss takes one advantage per
    sequence, grpo_trainer.py:2885-2897), loss_type "vespo" (its gamma
    weights are sequence-level, keyed on the advantage's sign, :2943-2990,
    3096-3107) or "luspo" (it scales a per-sequence loss by the sequence
    length, :3143-3148), and off_policy_mask_threshold (its mask keeps or
    drops whole sequences by the advantage's sign, :2920-2941, 3039-3049,
    3111-3112). args None (TRL's defaults) passes."""
    if args is None:
        return
    why = []
    if getattr(args, "use_liger_kernel", False):
        why.append("use_liger_kernel=True: the fused liger GRPO loss takes one advantage per sequence")
    if getattr(args, "loss_type", None) in ("vespo", "luspo"):
        why.append("loss_type=%r: its weights and length scaling are per sequence" % args.loss_type)
    if getattr(args, "off_policy_mask_threshold", None) is not None:
        why.append("off_policy_mask_threshold: the off-policy mask keeps or drops whole sequences by the sign of "
                   "one advantage")
    if why:
        raise ValueError("probe_rpo_trainer: per-turn advantages would break or change meaning with " +
                         "; ".join(why) + ". Use loss_type grpo, bnpo, dr_grpo, dapo, cispo or sapo without them.")


def probe_rpo_trainer(base=None):
    """A subclass of grouped_trainer(base) (TRL's GRPOTrainer by default)
    that trains with the Probe-RPO advantage A_{i,t} = A_out,i + lambda *
    A_dense,i,t (Probe-RPO paper, Eq. 3; docs/grpo.md) on the tokens of
    persuader turn t. It takes three keyword arguments besides
    GRPOTrainer's: ``probe_rpo_lambda`` (default 0.5), ``dense_mode``
    (default "scaled") and ``shuffle_seed`` (default None; a run seed turns
    on the belief-shuffled control). It overrides only
    ``_generate_and_score_completions``, post-processing the base's output
    (probe_rpo_output); the environment must be ``PersuArenaEnv``. TRL's
    own advantage from the reward functions is replaced, so those only
    log. Raises ValueError for a negative lambda and check_config's."""
    grouped = grouped_trainer(base)

    class ProbeRPOGRPOTrainer(grouped):
        def __init__(self, *args, probe_rpo_lambda=DEFAULT_LAMBDA, dense_mode="scaled", shuffle_seed=None, **kwargs):
            if not (math.isfinite(probe_rpo_lambda) and probe_rpo_lambda >= 0):
                raise ValueError("probe_rpo_lambda = %r, want a finite value >= 0" % (probe_rpo_lambda,))
            check_config(kwargs.get("args", args[2] if len(args) > 2 else None))
            super().__init__(*args, **kwargs)
            self.probe_rpo_lambda, self.dense_mode, self.shuffle_seed = probe_rpo_lambda, dense_mode, shuffle_seed

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            return probe_rpo_output(self, out, self.probe_rpo_lambda, self.dense_mode, self.shuffle_seed)

    return ProbeRPOGRPOTrainer
