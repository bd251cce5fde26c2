"""PersuArena for TRL's GRPOTrainer (huggingface/trl
f2cd57710ae345ea6428ae95363267fcf38a3dc8, v1.9.0): the environment class
(``PersuArenaEnv``, for ``environment_factory``), the dense reward function
(``dense_reward``) and ``probe_rpo_trainer``, a GRPOTrainer subclass that
trains with the per-turn Probe-RPO advantage (docs/trainers.md).

TRL is imported only by ``probe_rpo_trainer``; the rest is standard
library.
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
    they are (grpo_trainer.py:3026-3030 at f2cd577). The traces of every
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


def probe_rpo_trainer(base=None):
    """A subclass of TRL's GRPOTrainer (or of base) that trains with the
    Probe-RPO advantage A_{i,t} = A_out,i + lambda * A_dense,i,t (Probe-RPO
    paper, Eq. 3; docs/grpo.md) on the tokens of persuader turn t. It takes
    three keyword arguments besides GRPOTrainer's: ``probe_rpo_lambda``
    (default 0.5), ``dense_mode`` (default "scaled") and ``shuffle_seed``
    (default None; a run seed turns on the belief-shuffled control). It overrides only
    ``_generate_and_score_completions``, post-processing the base's output
    (probe_rpo_output); the environment must be ``PersuArenaEnv``. TRL's
    own advantage from the reward functions is replaced, so those only
    log."""
    if base is None:
        from trl import GRPOTrainer as base

    class ProbeRPOGRPOTrainer(base):
        def __init__(self, *args, probe_rpo_lambda=DEFAULT_LAMBDA, dense_mode="scaled", shuffle_seed=None, **kwargs):
            if not (math.isfinite(probe_rpo_lambda) and probe_rpo_lambda >= 0):
                raise ValueError("probe_rpo_lambda = %r, want a finite value >= 0" % (probe_rpo_lambda,))
            super().__init__(*args, **kwargs)
            self.probe_rpo_lambda, self.dense_mode, self.shuffle_seed = probe_rpo_lambda, dense_mode, shuffle_seed

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            return probe_rpo_output(self, out, self.probe_rpo_lambda, self.dense_mode, self.shuffle_seed)

    return ProbeRPOGRPOTrainer
