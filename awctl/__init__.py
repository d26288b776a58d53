"""awctl: language world models for general agents.

The package root imports nothing heavy: ``import awctl`` must stay fast so the CLI starts quickly.
"""

__version__ = "0.1.0"
