"""Named faults a simulator can be asked to inject into calculator output.

``Perturbation.instruction`` is a ``str.format`` template filled with ``defaults`` overridden by the
caller's parameters; the text is added to the simulation instruction of the turns it applies to. Each one
names the exact line the faulty calculator prints, so a perturbed episode stays parseable.
"""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation("overflow", "every result overflows", "Answer this line with `Error: overflow` and nothing else."),
    Perturbation(
        "forgotten_variable",
        "the calculator lost one variable",
        "The calculator has lost the variable {name}: any line that reads {name} prints "
        "`Error: name '{name}' is not defined`; other lines behave normally.",
        {"name": "x"},
    ),
    Perturbation(
        "rounding",
        "results are rounded to a few digits",
        "This calculator rounds every non-integer result to {digits} significant digits.",
        {"digits": 3},
    ),
)
