"""The Probe-RPO advantage (Probe-RPO paper, Eq. 3) as a verl advantage estimator.

Per group (the rollouts of one dataset row, verl's ``uid``):

    A_{i,t} = A_out,i + lambda * A_dense,i,t

with A_out the group-normalised outcome reward (as verl's ``grpo``) and
A_dense the dense term of docs/grpo.md built from the per-turn belief
changes r_t = B_t - B_{t-1}; the default mode ``scaled`` is
sum_{t' >= t} r_{i,t'} / (std + eps). A_{i,t} is placed on every token of
persuader turn t.

The pure functions (``outcome_advantages``, ``dense_advantages``,
``combine``, ``group_advantages``) are a float64 transcription of Go's
``grpo.OutcomeAdvantages``, ``grpo.DenseAdvantages``, ``grpo.Combine`` and
``grpo.AnalyzeParts`` (same operations in the same order), checked to 1e-9
against grpo/testdata/probe_rpo_groups.json, which a Go test writes
(python/tests/test_verl_advantage.py). Missing values are None or NaN.

``compute_probe_rpo_advantage`` is the estimator verl calls. verl hands a
registered estimator only ``token_level_rewards``, ``response_mask``,
``index`` and ``config`` (verl-project/verl v0.9.0 = 483b8a0,
verl/trainer/ppo/ray_trainer.py:249-257; the same at v0.8.0 and main
1dda039), so the per-turn signal travels in the token rewards
(``rm_scores``), which PersuArena's agent loop writes
(``persuarena.verl.agent_loop``), and a failed episode in the mask:

- a persuader turn is a maximal run of response tokens with mask 1 (the
  persuadee's replies between turns have mask 0), and every turn ends at
  least two tokens before the end of the response;
- turn t's first token carries r_t in [-1, 1], or MISSING_DENSE (4.0) when
  r_t is missing (unreadable probes, a message the server never scored);
  the first token after the turn carries minus that value;
- the last response token carries R_out (where verl writes
  ``reward_score``); every other token 0. So a row's sum is R_out: what
  verl logs as the score, in training and validation;
- a failed episode (a server error or a step over the timeout: R_out
  missing) has mask 0 on every token and token rewards 0: it has no turns,
  and is left out of its group.

Choice: the failed episode is carried by the mask, and a missing r_t by a
value outside the range of any r_t, because any reward pass after the
agent loop would turn a value mark such as -0.0 into a real 0 (a KL term,
even an added 0.0: -0.0 + 0.0 = +0.0), and a failed episode would then
re-enter its group with R_out 0. Each turn's compensating token makes any change to a turn's first token
visible: ``decode_token_rewards`` raises ValueError ("altered") when a
turn's mark and its compensation disagree, and the estimator refuses
``algorithm.use_kl_in_reward=True`` outright (the KL goes in the loss, as
in the Probe-RPO paper's Table 3). The agent loop refuses a colocated
reward model, which overwrites ``rm_scores`` (persuarena.verl.agent_loop).

Token rewards that carry a scalar at the last token only (the legacy
trainer rebuilds them from ``reward_score``, verl v0.9.0
experimental/agent_loop/agent_loop.py:1086-1092) read as r_t = 0 on every
turn: the dense term is 0 and the estimator is outcome GRPO as
grpo.OutcomeAdvantages: verl's ``grpo`` with the sample std, except that a
group with fewer than two scored rollouts, or with tied rewards
(grpo.TieTolerance), gets exact zeros (verl's gives R/(1 + eps) to a lone
rollout and divides a tie's rounding residue by eps).

Settings come from environment variables, since verl's AlgoConfig takes no
unknown keys: PERSUARENA_LAMBDA (lambda, default 0.5, the Probe-RPO paper's
Table 9), PERSUARENA_DENSE_MODE (scaled, pooled, turn, rtg-per-turn or
length-only; default scaled) and PERSUARENA_SHUFFLE_SEED (unset: off; a
uint64 turns on the belief-shuffled control, grpo.ShuffleDense). The group std is the sample std (ddof 1,
torch.std's default, as verl's grpo) and eps 1e-6 (grpo.DefaultConfig).
"""

import math
import os

DENSE_MODES = ("scaled", "pooled", "turn", "rtg-per-turn", "length-only")

# grpo.TieTolerance (grpo/advantage.go).
TIE_TOLERANCE = 1e-12

DEFAULT_LAMBDA = 0.5
DEFAULT_EPS = 1e-6
DEFAULT_DDOF = 1


def _missing(x):
    return x is None or (isinstance(x, float) and math.isnan(x))


def _moments(xs, ddof):
    """(mean, std, tied) as grpo's moments: fewer than two values, or every
    deviation within TIE_TOLERANCE * max(1, |mean|), are tied."""
    n = len(xs)
    if n < 2:
        return 0.0, 0.0, True
    total = 0.0
    for x in xs:
        total += x
    mean = total / n
    max_dev, ss = 0.0, 0.0
    for x in xs:
        d = x - mean
        max_dev = max(max_dev, abs(d))
        ss += d * d
    if max_dev <= TIE_TOLERANCE * max(1.0, abs(mean)):
        return mean, 0.0, True
    return mean, math.sqrt(ss / (n - ddof)), False


def _normalize(xs, eps, ddof):
    mean, std, tied = _moments(xs, ddof)
    if tied:
        return [0.0] * len(xs)
    return [(x - mean) / (std + eps) for x in xs]


def _check(eps, ddof):
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise ValueError("eps = %r, want a finite value >= 0" % (eps,))
    if ddof not in (0, 1):
        raise ValueError("ddof = %r, want 0 or 1" % (ddof,))


def outcome_advantages(r_out, eps=DEFAULT_EPS, ddof=DEFAULT_DDOF):
    """A_out,i = (R_out,i - mean) / (std + eps) over the group's scored
    rollouts (Probe-RPO paper Eq. 3; grpo.OutcomeAdvantages). A missing
    (None/NaN) R_out is a failed episode: left out of the statistics,
    advantage 0. Returns a list of len(r_out) floats. Raises ValueError for
    an infinite R_out or a bad eps/ddof."""
    _check(eps, ddof)
    vals = []
    for i, r in enumerate(r_out):
        if not _missing(r) and math.isinf(r):
            raise ValueError("R_out of rollout %d is %r" % (i, r))
        if not _missing(r):
            vals.append(float(r))
    z = iter(_normalize(vals, eps, ddof))
    return [0.0 if _missing(r) else next(z) for r in r_out]


def _reverse_cumsum(x):
    acc = 0.0
    for t in range(len(x) - 1, -1, -1):
        acc += x[t]
        x[t] = acc


def dense_advantages(dense, mode="scaled", eps=DEFAULT_EPS, ddof=DEFAULT_DDOF):
    """A_dense,i,t of every persuader turn of one group (grpo.DenseAdvantages,
    docs/grpo.md "Dense modes"). dense[i][t] is r_t of rollout i's turn t+1,
    None/NaN when missing; rows may differ in length. A missing r_t is left
    out of the statistics and adds 0 to the sums; fewer than two rollouts
    with a dense reward, or tied rewards, give zeros. Returns dense's shape.
    Raises ValueError for an infinite r_t, an unknown mode or a bad eps/ddof."""
    _check(eps, ddof)
    if mode not in DENSE_MODES:
        raise ValueError("dense mode %r, want one of %s" % (mode, ", ".join(DENSE_MODES)))
    vals = []
    rollouts = 0
    for i, row in enumerate(dense):
        has = False
        for t, r in enumerate(row):
            if not _missing(r) and math.isinf(r):
                raise ValueError("dense reward of rollout %d turn %d is %r" % (i, t + 1, r))
            if not _missing(r):
                vals.append(float(r))
                has = True
        if has:
            rollouts += 1
    adv = [[0.0] * len(row) for row in dense]
    mean, std, tied = _moments(vals, ddof)
    if rollouts < 2 or tied:
        return adv
    s = std + eps
    if mode == "rtg-per-turn":
        return _rtg_per_turn(dense, adv, eps, ddof)
    for i, row in enumerate(dense):
        for t, r in enumerate(row):
            if _missing(r):
                continue
            if mode in ("scaled", "turn"):
                adv[i][t] = r / s
            elif mode == "pooled":
                adv[i][t] = (r - mean) / s
            else:  # length-only
                adv[i][t] = -mean / s
    if mode != "turn":
        for row in adv:
            _reverse_cumsum(row)
    return adv


def _rtg_per_turn(dense, adv, eps, ddof):
    rtg = [[0.0 if _missing(r) else float(r) for r in row] for row in dense]
    for row in rtg:
        _reverse_cumsum(row)
    longest = max((len(row) for row in dense), default=0)
    for t in range(longest):
        alive = [i for i, row in enumerate(rtg) if t < len(row)]
        for i, z in zip(alive, _normalize([rtg[i][t] for i in alive], eps, ddof)):
            adv[i][t] = z
    return adv


def combine(a_out, a_dense, lam):
    """A_{i,t} = A_out,i + lam * A_dense,i,t (grpo.Combine); with lam = 0
    exactly A_out,i (nothing is added)."""
    if len(a_out) != len(a_dense):
        raise ValueError("%d outcome advantages for %d rollouts" % (len(a_out), len(a_dense)))
    if lam == 0:
        return [[a] * len(row) for a, row in zip(a_out, a_dense)]
    return [[a + lam * d for d in row] for a, row in zip(a_out, a_dense)]


def group_advantages(r_out, dense, lam=DEFAULT_LAMBDA, mode="scaled", eps=DEFAULT_EPS, ddof=DEFAULT_DDOF):
    """One group's (A_out, A_dense, A) as grpo.AnalyzeParts: a failed rollout
    (None/NaN R_out) is left out of the dense statistics too and gets 0 on
    every turn. Raises ValueError for mismatched lengths, a negative or
    non-finite lam, and the errors of the functions above."""
    if len(r_out) != len(dense):
        raise ValueError("%d outcome rewards for %d rollouts" % (len(r_out), len(dense)))
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError("lambda = %r, want a finite value >= 0" % (lam,))
    a_out = outcome_advantages(r_out, eps, ddof)
    masked = [[None] * len(row) if _missing(r) else row for r, row in zip(r_out, dense)]
    a_dense = dense_advantages(masked, mode, eps, ddof)
    return a_out, a_dense, combine(a_out, a_dense, lam)


# --- the belief-shuffled control ------------------------------------------

_M64 = (1 << 64) - 1


def mix(z):
    """episode.Mix: the SplitMix64 finaliser on a uint64."""
    z = (z + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def step_seed(run_seed, step):
    """The shuffle seed of training step ``step``: Mix(seed ^ Mix(step +
    0x5f1e)), as persuarena train derives it (train/train.go)."""
    return mix((run_seed & _M64) ^ mix((step + 0x5F1E) & _M64))


class _PCG:
    """Go's math/rand/v2 PCG (128-bit LCG, DXSM output;
    /usr/local/go/src/math/rand/v2/pcg.go) with Rand.IntN's 64-bit
    reduction (rand.go uint64n), so that shuffle_dense draws what
    grpo.ShuffleDense draws."""

    _MUL = (2549297995355413924 << 64) | 4865540595714422341
    _INC = (6364136223846793005 << 64) | 1442695040888963407

    def __init__(self, seed1, seed2):
        self.state = ((seed1 & _M64) << 64) | (seed2 & _M64)

    def uint64(self):
        self.state = (self.state * self._MUL + self._INC) & ((1 << 128) - 1)
        hi, lo = self.state >> 64, self.state & _M64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & _M64
        hi ^= hi >> 48
        return (hi * (lo | 1)) & _M64

    def int_n(self, n):
        if n & (n - 1) == 0:
            return self.uint64() & (n - 1)
        prod = self.uint64() * n
        hi, lo = prod >> 64, prod & _M64
        if lo < n:
            thresh = ((1 << 64) - n) % n
            while lo < thresh:
                prod = self.uint64() * n
                hi, lo = prod >> 64, prod & _M64
        return hi


def shuffle_dense(groups, seed):
    """grpo.ShuffleDense, the belief-shuffled control of the lambda study:
    a copy of groups (groups[g][i] = rollout i's dense rewards in group g)
    in which every rollout's dense rewards are those of a rollout of another
    group with the same number of turns, drawn uniformly with replacement
    from Go's PCG(seed, 0x5b0f1e); failing that, the prefix of a longer
    rollout of another group (shortest length first); failing that, its own.
    Draws for draws equal to Go's (checked on grpo/testdata/probe_rpo_shuffle.json)."""
    by_len = {}
    longest = 0
    for g, grp in enumerate(groups):
        for i, row in enumerate(grp):
            by_len.setdefault(len(row), []).append((g, i))
            longest = max(longest, len(row))
    rng = _PCG(seed, 0x5B0F1E)
    out = []
    for g, grp in enumerate(groups):
        rows = []
        for row in grp:
            src = row
            for length in range(len(row), longest + 1):
                cands = [r for r in by_len.get(length, []) if r[0] != g]
                if cands:
                    cg, ci = cands[rng.int_n(len(cands))]
                    src = groups[cg][ci][: len(row)]
                    break
            rows.append(list(src))
        out.append(rows)
    return out


# --- the token-reward channel --------------------------------------------


def turn_spans(mask):
    """The persuader turns of one response: [start, end) of each maximal run
    of mask 1, in order."""
    spans, start = [], None
    for k, m in enumerate(mask):
        if m and start is None:
            start = k
        elif not m and start is not None:
            spans.append((start, k))
            start = None
    if start is not None:
        spans.append((start, len(mask)))
    return spans


#: The token reward of a turn whose r_t is missing. Choice: 4.0, outside
#: [-1, 1] (a belief difference) by more than any r_t can round to.
MISSING_DENSE = 4.0


def encode_token_rewards(n, spans, dense, r_out):
    """The token rewards of one response of n tokens (see the module doc):
    dense[t] (MISSING_DENSE when None/NaN) on the first token of spans[t]
    and minus it on the token after the span, R_out on the last token (0
    when None: a failed episode, whose mask the caller sets to 0), 0
    elsewhere. Raises ValueError when len(dense) != len(spans), a span
    ends later than n - 2, or an r_t is outside [-1, 1]."""
    if len(dense) != len(spans):
        raise ValueError("%d dense rewards for %d turns" % (len(dense), len(spans)))
    out = [0.0] * n
    for (start, end), r in zip(spans, dense):
        if end > n - 2:
            raise ValueError("turn [%d, %d) ends later than token %d of %d: no room for its compensation and R_out"
                             % (start, end, n - 2, n))
        if not _missing(r) and not -1.0 <= r <= 1.0:
            raise ValueError("dense reward %r outside [-1, 1]" % (r,))
        x = MISSING_DENSE if _missing(r) else float(r)
        out[start], out[end] = x, -x
    if n:
        out[n - 1] = 0.0 if _missing(r_out) else float(r_out)
    return out


def decode_token_rewards(rewards, mask):
    """(R_out, dense, spans) of one response from its token rewards and
    mask, the inverse of encode_token_rewards: R_out is the exact sum of
    the rewards (math.fsum), None when the mask has no turn (a failed
    episode, or verl's padding rows); dense[t] is None for a missing r_t.
    Raises ValueError when the rewards were altered after the agent loop
    wrote them: a turn's first token holds neither a value in [-1, 1] nor
    MISSING_DENSE, or a nonzero one whose next token after the turn does not
    hold its negation (e.g. a KL term added to the model's tokens)."""
    spans = turn_spans(mask)
    if not spans:
        return None, [], []
    dense = []
    for start, end in spans:
        x = float(rewards[start])
        c = float(rewards[end]) if end < len(rewards) else 0.0
        if x != 0 and c != -x or not (x == MISSING_DENSE or -1.0 <= x <= 1.0):
            raise ValueError(
                "token rewards altered after the persuarena agent loop wrote them: turn [%d, %d) starts with %r "
                "and is followed by %r, want r in [-1, 1] or %r and its negation (a reward pass after the rollout, "
                "such as algorithm.use_kl_in_reward=True or a reward model rewriting rm_scores, breaks the per-turn "
                "rewards; see persuarena.verl.advantage)" % (start, end, x, c, MISSING_DENSE))
        dense.append(None if x == MISSING_DENSE else x)
    return math.fsum(float(x) for x in rewards), dense, spans


def settings():
    """(lambda, dense mode, shuffle run seed or None) from PERSUARENA_LAMBDA,
    PERSUARENA_DENSE_MODE and PERSUARENA_SHUFFLE_SEED. Raises ValueError for
    a bad value, naming the variable."""
    raw = os.environ.get("PERSUARENA_LAMBDA", "")
    try:
        lam = float(raw) if raw else DEFAULT_LAMBDA
    except ValueError:
        raise ValueError("PERSUARENA_LAMBDA=%r is not a number" % raw)
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError("PERSUARENA_LAMBDA=%r, want a finite value >= 0" % raw)
    mode = os.environ.get("PERSUARENA_DENSE_MODE", "") or "scaled"
    if mode not in DENSE_MODES:
        raise ValueError("PERSUARENA_DENSE_MODE=%r, want one of %s" % (mode, ", ".join(DENSE_MODES)))
    raw = os.environ.get("PERSUARENA_SHUFFLE_SEED", "")
    shuffle = None
    if raw:
        try:
            shuffle = int(raw, 0)
        except ValueError:
            raise ValueError("PERSUARENA_SHUFFLE_SEED=%r is not an integer" % raw)
        if not 0 <= shuffle < 1 << 64:
            raise ValueError("PERSUARENA_SHUFFLE_SEED=%r is not a uint64" % raw)
    return lam, mode, shuffle


def token_advantages(rewards, masks, index, lam=DEFAULT_LAMBDA, mode="scaled", eps=DEFAULT_EPS, ddof=DEFAULT_DDOF,
                     shuffle_seed=None):
    """Per-token Probe-RPO advantages of a batch given as lists: rewards[b]
    and masks[b] are row b's token rewards and mask, index[b] its group.
    Row b's turn t gets A_{b,t} on its mask-1 tokens; every other token 0,
    and a row without turns (a failed episode) 0 everywhere, left out of
    its group's statistics. Groups are taken in order of first appearance
    in index, rows keep their order within a group. With shuffle_seed, the
    dense rewards are first replaced by shuffle_dense's (the
    belief-shuffled control). Raises decode_token_rewards' ValueError."""
    groups = {}
    for b, g in enumerate(index):
        groups.setdefault(g, []).append(b)
    out = [[0.0] * len(m) for m in masks]
    decoded = {g: [decode_token_rewards(rewards[b], masks[b]) for b in rows] for g, rows in groups.items()}
    dense = {g: [d[1] for d in dec] for g, dec in decoded.items()}
    if shuffle_seed is not None:
        dense = dict(zip(dense, shuffle_dense(list(dense.values()), shuffle_seed)))
    for g, rows in groups.items():
        _, _, a = group_advantages([d[0] for d in decoded[g]], dense[g], lam, mode, eps, ddof)
        for b, (_, _, spans), a_row in zip(rows, decoded[g], a):
            for (start, end), a_t in zip(spans, a_row):
                for k in range(start, end):
                    out[b][k] = a_t
    return out


# Estimator calls in this process: the training step of the shuffle seed.
_calls = 0


def _config_value(config, key):
    """config's key: an attribute (verl's AlgoConfig, omegaconf) or a
    mapping entry; None when absent."""
    if config is None:
        return None
    v = getattr(config, key, None)
    if v is None and hasattr(config, "get"):
        v = config.get(key)
    return v


def compute_probe_rpo_advantage(token_level_rewards, response_mask, index=None, epsilon=DEFAULT_EPS, config=None, **kwargs):
    """verl advantage estimator ``probe_rpo`` (the signature of verl's
    registered estimators, verl/trainer/ppo/core_algos.py at v0.9.0):
    token_level_rewards and response_mask are (bs, response_length)
    tensors, index the group ids (``uid``), config verl's AlgoConfig.
    Returns (advantages, returns), both the per-token A_{i,t}
    (bs, response_length), as verl's grpo does. Settings: see
    ``settings``; with PERSUARENA_SHUFFLE_SEED set, the k-th call (0-based)
    shuffles the batch's dense rewards with step_seed(seed, k), the
    belief-shuffled control of persuarena train --shuffle-beliefs.

    Raises ValueError for config.use_kl_in_reward (the KL terms land on the
    token rewards that carry r_t; use the actor's KL loss), for token
    rewards altered after the agent loop (decode_token_rewards), and for
    bad settings."""
    import torch

    global _calls
    if _config_value(config, "use_kl_in_reward"):
        raise ValueError("persuarena probe_rpo: algorithm.use_kl_in_reward=True adds KL terms to the token rewards "
                         "that carry the per-turn rewards r_t and R_out; set algorithm.use_kl_in_reward=False and "
                         "use the KL loss (actor_rollout_ref.actor.use_kl_loss=True)")
    lam, mode, shuffle = settings()
    seed = None
    if shuffle is not None:
        seed = step_seed(shuffle, _calls)
    _calls += 1
    if index is None:
        index = list(range(token_level_rewards.shape[0]))
    rewards = token_level_rewards.detach().float().cpu().tolist()
    masks = response_mask.detach().cpu().tolist()
    adv = token_advantages(rewards, masks, list(index), lam, mode, epsilon, DEFAULT_DDOF, seed)
    t = torch.tensor(adv, dtype=token_level_rewards.dtype, device=token_level_rewards.device) * response_mask
    return t, t
