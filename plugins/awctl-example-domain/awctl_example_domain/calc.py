"""The real environment's engine: a safe arithmetic evaluator with variables (no eval())."""

from __future__ import annotations

import ast
import operator

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class CalcError(Exception):
    pass


def format_number(value: float | int) -> str:
    """Integers print without a decimal point; floats with up to 12 significant digits."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return str(value) if isinstance(value, int) else f"{value:.12g}"


class Calculator:
    """Evaluates one line: ``expr`` or ``name = expr``. Variables persist across lines."""

    def __init__(self) -> None:
        self.variables: dict[str, float | int] = {}

    def execute(self, line: str) -> str:
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
