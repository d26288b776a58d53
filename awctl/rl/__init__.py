"""World-model RL: one-turn expansion of trajectories, rollouts, hybrid rewards and the GSPO update.

:mod:`expand` turns each trajectory turn into a prompt (prefix up to the action) with its reference
observation; :mod:`rewards` scores a generation (strict tag extraction, rubric judge, rule verifiers);
:mod:`rollout` samples groups from the live policy and scores their tokens; :mod:`gspo` runs the loop.
"""
