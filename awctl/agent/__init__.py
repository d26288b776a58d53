"""Agent RL: train a policy (a causal LM acting through a domain's action codec) in real, simulated or
hybrid environments, and evaluate it.

:mod:`episode` is the token-level record of an episode (ids as sampled, observation tokens with loss
weight 0); :mod:`policy` the chat layout and the samplers (token-id prompts in, ids and log-probs out);
:mod:`rollout` the engine that plays many episodes at once with timeouts and crash isolation;
:mod:`rewards` the checker-or-judge reward; :mod:`bc` the behaviour-cloning warm start on reference
solutions; :mod:`train` GSPO with the world-model RL loss and dynamic sampling; :mod:`evaluate` success
rates with Wilson intervals. :mod:`envs` and :mod:`executors` provide environment pools (real, simulated,
hybrid) and the Ray executor. The stage kinds ``agent_train`` and ``agent_eval`` (``awctl agent``) tie them
together. Modules import torch only inside functions.
"""
