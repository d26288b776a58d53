"""Example third-party awctl domain: a calculator REPL with variables.

The package follows the layout of awctl's built-in domains, so it can be read (and copied) module by
module: ``calculator.py`` (the engine), ``codec.py``, ``verifiers.py``, ``env.py``, ``importers.py``,
``tasks.py``, ``prompts.py``, ``perturbations.py``, ``faults.py``, ``domain.py`` (the :class:`Domain`
subclass) and ``plugin.py`` (the entry point, importing ``.domain`` lazily).
"""
