"""The ``os`` domain: a Linux desktop (Xvfb, openbox, GTK applications) seen through its accessibility tree.

A small library: ``actions.py`` and ``a11y.py`` (action and observation formats), ``codec.py`` (the two
codecs), ``verifiers.py`` (deterministic checks), ``faults.py`` (a planted fault per verifier),
``prompts.py`` (simulator wording), ``importers.py`` (OSWorld logs, AgentWorldBench rows), ``tasks.py``
(the ``basic`` suite), ``desktop.py`` + ``env.py`` (the real desktop), ``osworld_http.py`` (an adapter to an
OSWorld-style desktop server, and a local stand-in server), ``perturbations.py``, ``domain.py`` and
``plugin.py``. Helper processes: ``atspi_reader.py`` (system python) and ``executor.py``.

The folder is named ``os`` after the domain; every module imports the standard library's ``os``
absolutely, which is unaffected (the package is ``awctl_domains.os``).
"""
