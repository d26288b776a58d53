"""The ``web`` domain: an agent drives a real browser with BrowserGym's high-level actions and sees the
page as BrowserGym's flattened accessibility tree (plus open tabs, URL and title).

``codec.py`` (actions and observations), ``verifiers.py`` (deterministic checks), ``prompts.py``
(simulator prompt wording), ``importers.py`` (BrowserGym / WebArena step logs), ``tasks.py`` (tasks on the
shipped apps), ``env.py`` (Chromium driven by Playwright), ``apps/`` (the shop and the issue tracker),
``perturbations.py``, ``faults.py``, ``domain.py`` and ``plugin.py``.
"""
