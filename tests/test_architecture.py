"""The import graph of awctl has no loops and no import from a lower layer to a higher one.

Every ``import`` in ``awctl/`` counts, at module level or inside a function (a lazy import is still a
dependency); only imports under ``if TYPE_CHECKING:`` are left out, since they never run. Layers, top to
bottom: the CLI, then the stage layer (runner, recipes, stage kinds), then the plugin registry, then
library code, then the formats, the contracts and the foundation. Library code gets the registry or the
domains it needs passed in; it never reaches up for them.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "awctl"

# Lower number = higher layer. A module may import only from its own layer or lower ones (higher numbers).
LAYERS: dict[str, int] = {
    "awctl.cli": 0,
    "awctl.runner": 1, "awctl.recipe": 1, "awctl.stages": 1, "awctl.builtins": 1, "awctl.testing": 1,
    "awctl.plugins": 2,
    "awctl.rl": 3, "awctl.conformance": 3, "awctl.agent": 3,
    "awctl.train": 4, "awctl.eval": 4,
    "awctl.data": 5, "awctl.sim": 5, "awctl.record": 5, "awctl.report": 5,
    "awctl.envs": 6, "awctl.models": 6,
    "awctl.formats": 7,
    "awctl.backend": 8, "awctl.domain": 8, "awctl.env": 8, "awctl.prompts": 8, "awctl.hookspecs": 8,
    "awctl.trajectory": 9, "awctl.textio": 9, "awctl.keyvalue": 9, "awctl.config": 9, "awctl.runlog": 9,
    "awctl.errors": 9, "awctl": 9,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {r for f in found if f.startswith("awctl") and (r := _resolve(f)) and r != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> tuple[str, int]:
    best = max((g for g in LAYERS if module == g or module.startswith(g + ".")), key=len)
    return best, LAYERS[best]


def test_every_module_has_a_layer() -> None:
    missing = [m for m in MODULES if not any(m == g or m.startswith(g + ".") for g in LAYERS if g != "awctl")
               and m != "awctl"]
    assert not missing, f"add these modules to LAYERS: {missing}"


def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    upward = []
    for module, targets in GRAPH.items():
        group, rank = _layer(module)
        for target in targets:
            tgroup, trank = _layer(target)
            if trank < rank:
                upward.append(f"{module} ({group}) imports {target} ({tgroup})")
    assert not upward, "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_loops_between_modules() -> None:
    assert _cycles(GRAPH) == []


def test_no_import_loops_between_packages() -> None:
    groups: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        for target in targets:
            a, b = _layer(module)[0], _layer(target)[0]
            if a != b:
                groups[a].add(b)
    assert _cycles(groups) == []


@pytest.mark.parametrize("edge", [("awctl.train.loop", "awctl.rl"), ("awctl.plugins", "awctl.cli.main")])
def test_the_checker_sees_a_planted_upward_import(edge: tuple[str, str]) -> None:
    module, target = edge
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph[module].add(target)
    assert _layer(target)[1] < _layer(module)[1]
