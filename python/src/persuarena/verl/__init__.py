"""PersuArena for verl >= 0.8: the ``persuarena`` agent loop and the
``probe_rpo`` advantage estimator (docs/trainers.md, integrations/verl/README.md).

Importing this package registers both with verl's registries when verl is
importable (``register``), and does nothing else without it. Every verl
process (trainer and agent-loop workers) must import it: verl v0.9.0 and
main do so by themselves, loading the package's ``verl.plugins`` entry
point at their own import (verl/__init__.py:44-66 at v0.9.0; the installed
openenv-persuarena distribution declares it); verl v0.8.0 has no plugin
hook, so there set VERL_USE_EXTERNAL_MODULES=persuarena.verl
(verl/__init__.py:38-41). python/conformance/test_verl.py checks both.
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
