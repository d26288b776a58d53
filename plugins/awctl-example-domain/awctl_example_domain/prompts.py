"""The calc domain's simulator prompt wording: ten role sentences, the simulation instruction and the
paragraph a rubric judge is given (``Domain.judge_guidance``)."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

CALC_ROLES: tuple[str, ...] = (
    "You are a world model of a calculator REPL with variables.",
    "Act as a line-by-line calculator: the agent types one statement, you print what the calculator prints.",
    "You simulate an arithmetic interpreter that keeps variables between lines.",
    "Play the role of a calculator program an agent types expressions and assignments into.",
    "You are the calculator. Answer each line exactly as the real calculator would.",
    "Simulate a calculator session; the agent sees only the single line you print for each input.",
    "You are an emulator of a small calculator REPL used by an AI agent.",
    "Pretend to be a real calculator with variables and print the true result of every line.",
    "You model how a calculator with named variables responds to each line an agent types.",
    "As a simulator of a calculator REPL, predict the one line it prints for the agent's latest input.",
)

CALC_SIMULATION_INSTRUCTION = (
    "Predict the line the calculator prints for the agent's latest input, given the initial state and "
    "every earlier line. An expression prints its value; `name = expression` stores the value and prints "
    "`name = <value>`. Integers print without a decimal point, other numbers with up to 12 significant "
    "digits. Failures print `Error: <message>` (`syntax error`, `name 'x' is not defined`, `division by "
    "zero`, `exponent too large`, `overflow`, `unsupported expression`, `one statement per line`). Print "
    "exactly one line; do not help or correct the agent. " + DEFAULT_OUTPUT_RULES
)


def calc_prompt_builder() -> PromptBuilder:
    return PromptBuilder(domain_title="calculator REPL", roles=CALC_ROLES,
                         simulation_instruction=CALC_SIMULATION_INSTRUCTION)


#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a calculator REPL with variables. Each action is one line (an expression or an
assignment); each observation is one line: the value, `name = value` for an assignment, or
`Error: message`. Check that the value is arithmetically right given the variables the initial state
lists and every earlier assignment, that integers carry no decimal point, that an undefined variable
gives the not-defined error, and that nothing but that one line is printed.
"""
