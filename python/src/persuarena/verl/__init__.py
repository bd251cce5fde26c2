"""PersuArena for verl >= 0.8: the ``persuarena`` agent loop and the
``probe_rpo`` advantage estimator (docs/trainers.md, integrations/verl/README.md).

Importing this package registers both with verl's registries when verl is
importable (``register``), and does nothing else without it: set
VERL_USE_EXTERNAL_MODULES=persuarena.verl so that every verl process
(trainer and agent-loop workers) imports it (verl/__init__.py:49-52 at
verl-project/verl 1dda039b9c6311889a9c9a26040677e1254814f9; verl also
loads "verl.plugins" entry points there, :55-76).
"""

from .advantage import (  # noqa: F401
    compute_probe_rpo_advantage,
    decode_token_rewards,
    encode_token_rewards,
    group_advantages,
    token_advantages,
    turn_spans,
)

AGENT_NAME = "persuarena"
ESTIMATOR_NAME = "probe_rpo"


def register():
    """Registers the agent loop as ``persuarena`` (verl's
    ``verl.experimental.agent_loop.agent_loop.register``) and the estimator
    as ``probe_rpo`` (``verl.trainer.ppo.core_algos.register_adv_est``).
    Returns True when verl was importable and both are registered, False
    when verl is not installed; registering twice is harmless."""
    try:
        from verl.experimental.agent_loop import agent_loop as verl_loop
        from verl.trainer.ppo import core_algos
    except ImportError:
        return False
    from . import agent_loop

    cls = agent_loop.build(verl_loop.AgentLoopBase, verl_loop.AgentLoopOutput)
    verl_loop.register(AGENT_NAME)(cls)
    if core_algos.ADV_ESTIMATOR_REGISTRY.get(ESTIMATOR_NAME) is not compute_probe_rpo_advantage:
        core_algos.register_adv_est(ESTIMATOR_NAME)(compute_probe_rpo_advantage)
    return True


register()
