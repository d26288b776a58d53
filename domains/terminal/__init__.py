"""The ``terminal`` domain: an agent types Terminus-style keystrokes into a Linux shell and sees the screen.

A small library a third party can copy to start a domain: ``codec.py`` (actions and screens),
``verifiers.py`` (deterministic checks), ``prompts.py`` (simulator prompt wording), ``importers.py``
(asciinema casts), ``tasks.py`` (the ``basic`` suite), ``env.py`` (the real sandboxed terminal),
``perturbations.py`` (faults a simulator can inject), ``domain.py`` (ties them together) and
``plugin.py`` (registration).
"""
