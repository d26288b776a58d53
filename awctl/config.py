"""Project configuration (``awctl.toml``): output root, plugin folders, default backend and model,
per-domain settings. Found by walking up from the current directory, or named by ``AWCTL_CONFIG``.

Loading never imports torch; every problem is reported at once with the file and the key.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from awctl.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_NAME = "awctl.toml"


class PluginsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dirs: list[str] = Field(default_factory=lambda: ["plugins"])


class DefaultsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: str = "transformers"
    model: str = "tiny"
    device: str = "auto"
    seed: int = 0


class ProjectConfig(BaseModel):
    """Validated awctl.toml. ``root`` is the folder the file lives in (relative paths resolve there)."""

    model_config = ConfigDict(extra="forbid")

    output_root: str = "runs"
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    defaults: DefaultsConfig = Field(default_factory=DefaultsConfig)
    domains: dict[str, dict[str, Any]] = Field(default_factory=dict)
    root: Path = Field(default_factory=Path.cwd, exclude=True)
    path: Path | None = Field(default=None, exclude=True)

    def resolve(self, value: str | Path) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.root / p

    def plugin_dirs(self) -> list[Path]:
        return [self.resolve(d) for d in self.plugins.dirs]

    def domain_settings(self, name: str) -> dict[str, Any]:
        return dict(self.domains.get(name, {}))


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a syntax error names the file, line and column."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path}: invalid TOML: {exc}"], hint="fix the TOML syntax at that line") from None


def validation_problems(exc: ValidationError, path: Path | str, prefix: str = "") -> list[str]:
    """One ``file: key: message (fix)`` line per pydantic error."""
    out = []
    for err in exc.errors():
        key = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (remove it or check its spelling)"
        elif err["type"] == "missing":
            msg = "required key is missing (add it)"
        out.append(f"{path}: {key}: {msg}")
    return out


def find_project_config(start: Path | None = None) -> Path | None:
    env = os.environ.get("AWCTL_CONFIG")
    if env:
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def load_project_config(path: Path | None = None) -> ProjectConfig:
    """The project config, or defaults rooted at the current directory when there is no awctl.toml."""
    path = path or find_project_config()
    if path is None:
        return ProjectConfig()
    data = read_toml(path)
    try:
        cfg = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, path), hint="see the commented awctl.toml in the repo") from None
    cfg.root = path.resolve().parent
    cfg.path = path
    return cfg
