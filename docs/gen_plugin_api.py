"""Generate ``docs/plugin-api.md``: every public type a domain plugin touches, from the code itself.

Signatures, dataclass and pydantic fields (types as written in the source, defaults) and docstrings are
read with :mod:`inspect`, so the page cannot drift from the code; ``tests/test_plugin_api_doc.py`` fails
when the committed page differs from what this script writes. Run from the repository root::

    .venv/bin/python docs/gen_plugin_api.py          # rewrite docs/plugin-api.md
    .venv/bin/python docs/gen_plugin_api.py --check  # exit 1 when it is stale

To document another name, add it to :data:`SECTIONS`; to change what the page says about a name, change
the name's docstring.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent / "plugin-api.md"
COMMAND = ".venv/bin/python docs/gen_plugin_api.py"

#: (title, module, names in page order; ``None``: every hook specification of the module).
SECTIONS: tuple[tuple[str, str, tuple[str, ...] | None], ...] = (
    ("Domains", "awctl.domain", (
        "Domain", "ActionCodec", "ObservationCodec", "TurnContext", "Verifier", "verifier", "VerifyResult",
        "VerifierCredit", "verifier_credit", "verifier_outcomes", "run_verifiers", "Fault", "Importer", "Task",
        "CheckResult", "Perturbation",
    )),
    ("Environments", "awctl.env", ("Environment", "StepResult")),
    ("Prompts", "awctl.prompts", ("PromptBuilder", "DEFAULT_OUTPUT_RULES", "OBSERVATION_TAG")),
    ("Trajectories", "awctl.trajectory", ("Trajectory", "Turn", "SystemPrompt", "SECTION_NAMES")),
    ("Hooks", "awctl.hookspecs", None),
    ("Errors a plugin raises", "awctl.errors", ("AwctlError", "CodecError", "InputError", "EnvironmentUnavailable")),
    ("Conformance kit", "awctl.conformance", ("check_domain", "ConformanceReport", "RuleOutcome", "RULES")),
)

#: Modules whose documented members must all have a docstring (the test enforces it).
DOCSTRINGS_REQUIRED = ("awctl.domain", "awctl.env", "awctl.prompts", "awctl.hookspecs", "awctl.errors")

_DUNDERS = ("__init__", "__call__")
_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|obj|exc):`~?([^`]+)`")
_MAX_REPR = 72


# ── docstrings ───────────────────────────────────────────────────────────────────────────────────────


def markdown(doc: str | None) -> str:
    """A reST-flavoured docstring as Markdown: ``code`` and :role:`name` become `code`; ``::`` before a
    literal block becomes ``:`` (the indented block stays a Markdown code block)."""
    if not doc:
        return ""
    text = inspect.cleandoc(doc)
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    text = re.sub(r"``(.+?)``", r"`\1`", text, flags=re.S)
    text = re.sub(r"\s*::\n", ":\n", text)
    return text.strip()


# ── signatures ───────────────────────────────────────────────────────────────────────────────────────


def short_repr(value: Any, limit: int = _MAX_REPR) -> str:
    """``repr(value)``; a long string is cut with an ellipsis, a long sequence or dict shows its first item
    and its length."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, (tuple, list)) and value:
        open_, close = ("(", ")") if isinstance(value, tuple) else ("[", "]")
        return f"{open_}{short_repr(value[0], 40)}, ...{close}  # {len(value)} items"
    if isinstance(value, dict) and value:
        key = next(iter(value))
        return f"{{{short_repr(key, 30)}: {short_repr(value[key], 30)}, ...}}  # {len(value)} items"
    if isinstance(value, str):
        cut = repr(value[: limit - 5])
        return cut[:-1] + "..." + cut[-1]
    return text[: limit - 3] + "..."


def _annotation(ann: Any) -> str:
    if ann is inspect.Parameter.empty:
        return ""
    if isinstance(ann, str):
        return ann
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "").replace("collections.abc.", "")


def signature(fn: Callable[..., Any], name: str | None = None) -> str:
    """``name(params) -> return`` with the annotations as written in the source."""
    sig = inspect.signature(fn)
    parts: list[str] = []
    star_done = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
            text = f"*{p.name}"
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        else:
            if p.kind is p.KEYWORD_ONLY and not star_done:
                parts.append("*")
                star_done = True
            text = p.name
        ann = _annotation(p.annotation)
        if ann:
            text += f": {ann}"
        if p.default is not p.empty:
            text += f" = {short_repr(p.default)}" if ann else f"={short_repr(p.default)}"
        parts.append(text)
    ret = _annotation(sig.return_annotation)
    return f"{name or fn.__name__}({', '.join(parts)})" + (f" -> {ret}" if ret else "")


def _dataclass_fields(cls: type) -> list[str]:
    lines = []
    for f in dataclasses.fields(cls):
        text = f"{f.name}: {_annotation(f.type)}"
        if f.default is not dataclasses.MISSING:
            text += f" = {short_repr(f.default)}"
        elif f.default_factory is not dataclasses.MISSING:
            factory = f.default_factory
            if isinstance(factory, type):
                text += f" = field(default_factory={factory.__name__})"
            else:
                text += f" = field(default_factory=...)  # {short_repr(factory())}"
        lines.append(text)
    return lines


def _pydantic_fields(cls: type) -> list[str]:
    from pydantic_core import PydanticUndefined

    lines = []
    annotations = {k: v for c in reversed(cls.__mro__) for k, v in getattr(c, "__annotations__", {}).items()}
    for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
        text = f"{name}: {_annotation(annotations.get(name, info.annotation))}"
        if info.default_factory is not None:
            text += f" = Field(default_factory={getattr(info.default_factory, '__name__', '...')})"
        elif info.default is not PydanticUndefined:
            text += f" = {short_repr(info.default)}"
        constraints = [str(m).strip("()").replace("MinLen(", "").replace("MaxLen(", "") for m in info.metadata]
        if constraints:
            text += f"  # {', '.join(constraints)}"
        lines.append(text)
    config = getattr(cls, "model_config", {})
    if config.get("extra") == "forbid":
        lines.append("# unknown fields are rejected (extra='forbid')")
    return lines


def _class_attributes(cls: type) -> list[str]:
    lines = []
    for name, ann in cls.__dict__.get("__annotations__", {}).items():
        text = f"{name}: {_annotation(ann)}"
        if name in cls.__dict__:
            text += f" = {short_repr(cls.__dict__[name])}"
        lines.append(text)
    return lines


def _is_pydantic(cls: type) -> bool:
    return hasattr(cls, "model_fields") and hasattr(cls, "model_validate")


def class_header(cls: type) -> str:
    """The class as it would be declared: decorator, bases, then its fields or annotated attributes."""
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    head = f"class {cls.__name__}" + (f"({', '.join(bases)})" if bases else "") + ":"
    if dataclasses.is_dataclass(cls):
        frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        head = ("@dataclass(frozen=True)\n" if frozen else "@dataclass\n") + head
        body = _dataclass_fields(cls)
    elif _is_pydantic(cls):
        body = _pydantic_fields(cls)
    else:
        body = _class_attributes(cls)
    return head + "".join(f"\n    {line}" for line in body or ["..."])


# ── members ──────────────────────────────────────────────────────────────────────────────────────────


def members(cls: type) -> Iterator[tuple[str, str, str | None]]:
    """``(name, signature line, docstring)`` of every public method and property ``cls`` defines itself."""
    dataclass_generated = dataclasses.is_dataclass(cls) or _is_pydantic(cls)
    for name, obj in cls.__dict__.items():
        if name.startswith("_") and name not in _DUNDERS:
            continue
        if name == "__init__" and dataclass_generated:
            continue
        if isinstance(obj, property) and obj.fget is not None:
            ret = _annotation(inspect.signature(obj.fget).return_annotation)
            yield name, f"property {name}" + (f" -> {ret}" if ret else ""), obj.__doc__
        elif isinstance(obj, cached_property):
            ret = _annotation(inspect.signature(obj.func).return_annotation)
            yield name, f"cached_property {name}" + (f" -> {ret}" if ret else ""), obj.__doc__
        elif isinstance(obj, (classmethod, staticmethod)):
            kind = "classmethod" if isinstance(obj, classmethod) else "staticmethod"
            yield name, f"@{kind} def {signature(obj.__func__)}", obj.__func__.__doc__
        elif inspect.isfunction(obj) and obj.__qualname__.startswith(cls.__name__ + "."):
            prefix = "@abstractmethod def " if getattr(obj, "__isabstractmethod__", False) else "def "
            yield name, prefix + signature(obj), obj.__doc__


# ── the page ─────────────────────────────────────────────────────────────────────────────────────────


def _slug(heading: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading (duplicates get -1, -2...)."""
    base = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
    n = seen.get(base, 0)
    seen[base] = n + 1
    return base if n == 0 else f"{base}-{n}"


def _names(module: Any, names: tuple[str, ...] | None) -> tuple[str, ...]:
    if names is not None:
        return names
    return tuple(n for n, obj in vars(module).items() if inspect.isfunction(obj) and hasattr(obj, "awctl_spec"))


def _class_doc(cls: type) -> str:
    doc = cls.__doc__ or ""
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return ""  # the signature dataclasses writes when a class has no docstring
    return markdown(doc)


def _entry(module: Any, name: str, missing: list[str]) -> list[str]:
    obj = getattr(module, name)
    qual = f"{module.__name__}.{name}"
    out: list[str] = []
    required = module.__name__ in DOCSTRINGS_REQUIRED
    if inspect.isclass(obj):
        out += ["```python", class_header(obj), "```", ""]
        doc = _class_doc(obj)
        if not doc and required:
            missing.append(qual)
        out += [doc, ""]
        for member, line, member_doc in members(obj):
            text = markdown(member_doc)
            # A constructor is described by its class; any other member needs its own docstring.
            if not text and required and member != "__init__":
                missing.append(f"{qual}.{member}")
            out += [f"**`{line}`**", "", text, ""]
    elif callable(obj) and hasattr(obj, "__code__"):
        decorator = "@hookspec\n" if hasattr(obj, "awctl_spec") else ""
        out += ["```python", f"{decorator}def {signature(obj)}", "```", ""]
        doc = markdown(obj.__doc__)
        if not doc and required:
            missing.append(qual)
        out += [doc, ""]
    elif isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
        out += ["| key | value |", "|---|---|"]
        out += [f"| `{k}` | {v.replace('|', chr(92) + '|')} |" for k, v in obj.items()]
        out.append("")
    else:
        out += ["```python", f"{name} = {obj!r}", "```", ""]
    return out


def render() -> tuple[str, list[str]]:
    """The page text and the documented members (in :data:`DOCSTRINGS_REQUIRED`) that lack a docstring."""
    missing: list[str] = []
    seen: dict[str, int] = {}
    toc: list[str] = []
    body: list[str] = []
    for title, module_name, names in SECTIONS:
        module = importlib.import_module(module_name)
        heading = f"{title}: `{module_name}`"
        toc.append(f"- [{heading}](#{_slug(heading, seen)})")
        body += [f"## {heading}", "", markdown(module.__doc__), ""]
        for name in _names(module, names):
            obj = getattr(module, name)
            label = f"{name}()" if inspect.isfunction(obj) else name
            entry_heading = f"`{module_name}.{label}`"
            toc.append(f"  - [`{label}`](#{_slug(entry_heading, seen)})")
            body += [f"### {entry_heading}", "", *_entry(module, name, missing)]
    head = [
        "<!-- Generated by docs/gen_plugin_api.py from the code's signatures and docstrings: do not edit.",
        f"     Change the docstrings, then run `{COMMAND}`. -->",
        "",
        "# Plugin API reference",
        "",
        "Every public type a domain plugin touches, with its signature, fields and docstring, generated from",
        "the code. The guide is [writing-a-domain-plugin.md](writing-a-domain-plugin.md); a complete plugin is",
        "`plugins/awctl-example-domain/`.",
        "",
        *toc,
        "",
    ]
    text = "\n".join(head + body).rstrip() + "\n"
    return re.sub(r"\n{3,}", "\n\n", text), missing


def main(argv: list[str]) -> int:
    text, missing = render()
    if missing:
        print("warning: no docstring: " + ", ".join(missing), file=sys.stderr)
    if "--check" in argv:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
