"""The ``android`` domain: an agent acts on an Android phone with AndroidWorld JSON actions and sees its screen.

``actions.py`` (AndroidWorld's action schema), ``screens.py`` and ``uixml.py`` (UI element lists and
uiautomator dumps), ``codec.py`` (both codecs), ``verifiers.py``, ``faults.py`` (one planted fault per
verifier), ``prompts.py``, ``importers.py`` (AndroidWorld episode logs, AgentWorldBench rows), ``tasks.py``
(the ``basic`` suite), ``adb.py`` and ``env.py`` (the real device over ADB), ``standin.py`` (an ``adb``
that replays recorded device transcripts, for tests), ``perturbations.py``, ``domain.py`` and
``plugin.py``.
"""
