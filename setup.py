"""Package layout that pyproject.toml cannot express: source folders installed under other names.

``domains/`` (the built-in domain plugins) installs as ``awctl_domains`` so it cannot collide with a
user's own top-level ``domains`` package; ``recipes/`` (the shipped recipes) installs as the package data
``awctl_recipes``, so any install can list, run and copy them. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

DOMAINS = [f"awctl_domains.{name}" for name in find_packages("domains")]

setup(
    packages=[*find_packages(include=["awctl", "awctl.*"]), "awctl_domains", *DOMAINS, "awctl_recipes"],
    package_dir={"awctl_domains": "domains", "awctl_recipes": "recipes"},
)
