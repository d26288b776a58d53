"""The calculator itself: a safe arithmetic evaluator with variables (no ``eval()``).

Both the real environment (``env.py``) and the verifiers (``verifiers.py``) use it: the calculator is a
pure function of its starting variables and the lines typed, so replaying a trajectory's initial state
and history reproduces what the real program printed.
"""

from __future__ import annotations

import ast
import operator
import re

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}

READY = "calc ready; variables: "
_BINDING = re.compile(r"^([A-Za-z_]\w*) = (\S+)$")

#: Every message of an ``Error: ...`` line the calculator prints (as regular expressions).
ERROR_MESSAGES: tuple[str, ...] = (
    "syntax error", "one statement per line", "unsupported statement", "unsupported expression",
    r"name '[A-Za-z_]\w*' is not defined", "exponent too large", "division by zero", "overflow",
)


class CalcError(Exception):
    """An expression the calculator refuses (its message becomes the ``Error: ...`` line)."""


def format_number(value: float | int) -> str:
    """Integers print without a decimal point; floats with up to 12 significant digits."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return str(value) if isinstance(value, int) else f"{value:.12g}"


class Calculator:
    """Evaluates one line: ``expr`` or ``name = expr``. Variables persist across lines."""

    def __init__(self, variables: dict[str, float | int] | None = None) -> None:
        self.variables: dict[str, float | int] = dict(variables or {})

    def state(self) -> str:
        """The banner a session starts with: every variable and its value, sorted by name."""
        bound = ", ".join(f"{k} = {format_number(v)}" for k, v in sorted(self.variables.items()))
        return READY + (bound or "none")

    def execute(self, line: str) -> str:
        """The one line the calculator prints for ``line``: a number, ``name = number`` or ``Error: ...``."""
        try:
            tree = ast.parse(line.strip(), mode="exec")
        except SyntaxError:
            return "Error: syntax error"
        if len(tree.body) != 1:
            return "Error: one statement per line"
        node = tree.body[0]
        try:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = self._eval(node.value)
                self.variables[node.targets[0].id] = value
                return f"{node.targets[0].id} = {format_number(value)}"
            if isinstance(node, ast.Expr):
                return format_number(self._eval(node.value))
            return "Error: unsupported statement"
        except CalcError as exc:
            return f"Error: {exc}"
        except ZeroDivisionError:
            return "Error: division by zero"
        except OverflowError:
            return "Error: overflow"

    def _eval(self, node: ast.AST) -> float | int:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.variables:
                raise CalcError(f"name '{node.id}' is not defined")
            return self.variables[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self._eval(node.left), self._eval(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 100:
                raise CalcError("exponent too large")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self._eval(node.operand))
        raise CalcError("unsupported expression")


def calculator_from_state(text: str) -> Calculator | None:
    """A calculator holding the variables a session banner (:meth:`Calculator.state`) lists, or ``None``
    when ``text`` is not such a banner (another program's recording: nothing to replay from)."""
    text = text.strip()
    if not text.startswith(READY):
        return None
    listed = text[len(READY):]
    calc = Calculator()
    if listed == "none":
        return calc
    for binding in listed.split(", "):
        match = _BINDING.match(binding)
        if not match or calc.execute(binding).startswith("Error:"):
            return None
    return calc
