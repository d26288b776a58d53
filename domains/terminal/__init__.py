"""The ``terminal`` domain: an agent types Terminus-style keystrokes into a Linux shell and sees the screen.

A small library a third party can copy to start a domain: ``codec.py`` (actions, and observations in
both screen forms), ``prompt_shapes.py`` (shell and REPL prompts of any family), ``session.py`` (what a
trajectory establishes: geometry, screen form, prompt, home, working directory), ``verifiers.py``
(deterministic checks built on it), ``faults.py`` (planted faults each verifier must catch),
``recordings.py`` and ``importers.py`` (asciinema casts v2/v3, ``script`` typescripts), ``prompts.py``
(simulator prompt wording), ``tasks.py``/``drills.py`` (task suites), ``env.py`` (the real sandboxed
terminal), ``perturbations.py`` (faults a simulator can inject), ``domain.py`` (ties them together) and
``plugin.py`` (registration).
"""
