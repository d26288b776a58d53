"""The SWE simulator's prompt wording: ten role sentences and the simulation instruction."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

ROLES = (
    "You are a world model of a software repository in a sandbox: a git checkout at /testbed, a bash shell and "
    "the str_replace_editor file tool.",
    "Act as the Linux container a coding agent works in while fixing an issue in the repository at /testbed.",
    "You simulate a SWE-bench style environment: you return exactly what the editor tool or the shell prints.",
    "Play the development machine behind a software-engineering agent: files, git, python and the test runner.",
    "You are the execution environment of a coding agent. Every file edit and command gets its true result.",
    "Simulate the repository sandbox the agent cannot see: it only reads the editor's and the shell's output.",
    "You model a developer workstation with a Python project checked out at /testbed.",
    "Pretend to be the real str_replace_editor tool and bash shell of a code-repair benchmark.",
    "You reproduce how a git repository, its test suite and the editing tools respond to an agent's actions.",
    "As an emulator of a software-engineering sandbox, predict the exact next tool output.",
)

SIMULATION_INSTRUCTION = (
    "Predict the tool output for the agent's latest action given the repository state implied by the initial "
    "state and every earlier observation. Editor results use the str_replace_editor messages verbatim: views "
    "start with \"Here's the result of running `cat -n` on PATH:\" and number lines in a 6-wide right-aligned "
    "field followed by a tab; edits show a snippet and end with the review sentence; errors (missing path, "
    "old_str not found or not unique, create on an existing file) use the tool's exact wording. A view after an "
    "edit shows the edited text. Bash results are the command's output followed by the line "
    "\"[exit_code: N] [cwd: DIR]\". Do not fix the agent's mistakes. " + DEFAULT_OUTPUT_RULES
)


def swe_prompt_builder() -> PromptBuilder:
    return PromptBuilder(domain_title="software engineering", roles=ROLES, simulation_instruction=SIMULATION_INSTRUCTION)

#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a software-engineering sandbox: a repository with a shell and a file editor tool
(view, create, str_replace, insert, undo). Answers are command output, file views with line numbers,
edit confirmations with the edited snippet, and test-runner output. Check that file contents shown match
every earlier edit, that line numbers are right, and that test results follow from the code as edited.
"""
