"""What a judge sees for one AgentWorldBench row, built the way the official ``eval.py`` builds it.

* :func:`extract_prediction` — the observation inside a raw generation: reasoning removed (``<think>``
  blocks, closed or not, via :mod:`awctl.sim.parse`), then the *last* ``<predicted_observation>`` block
  (an unclosed one runs to the end), stripped. Without any tag the whole reasoning-free text is used; an
  empty generation or an empty untagged remainder becomes ``"No output"`` (the official placeholder).
* :func:`clean_marker` — the ``**Environment Observation:**`` response marker removed (prefix, else every
  occurrence) and the text stripped, applied to both prediction and ground truth before judging.
* :func:`row_view` — a row's history (prompt/response pairs before ``turn_idx``), current prompt and
  ground-truth response, with ``prompt``/``response`` given as strings or lists.
* :func:`inference_messages` — the chat messages the world model is asked to continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from awctl.formats.agentworldbench import OBSERVATION_MARKER, subtask
from awctl.sim.parse import extract_observation, strip_reasoning

NO_OUTPUT = "No output"


def extract_prediction(gen: str | None) -> str:
    """The predicted observation in a raw generation (see module docstring for the rules)."""
    if not gen:
        return NO_OUTPUT
    body, _ = strip_reasoning(gen)
    observation, diag = extract_observation(body)
    if not diag["tagged"]:
        return observation.strip() or NO_OUTPUT
    return observation.strip()


def clean_marker(text: str, marker: str = OBSERVATION_MARKER) -> str:
    """``text`` without the response marker: a leading one is cut off, otherwise all occurrences go."""
    if text.startswith(marker):
        return text[len(marker) :].strip()
    return text.replace(marker, "").strip()


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def turn_index(row: dict[str, Any]) -> int:
    """The 0-based index of the evaluated turn (``turn_idx`` is 1-based; missing means 1)."""
    raw = row.get("turn_idx", 1)
    try:
        return max(int(raw) - 1, 0)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class RowView:
    """The parts of one row a world model and a judge see."""

    domain: str
    system: str
    history: list[tuple[str, str]]  # (prompt, response) pairs of the turns before the evaluated one
    current_prompt: str
    ground_truth_raw: str
    turn: int

    @property
    def ground_truth(self) -> str:
        return clean_marker(self.ground_truth_raw)


def row_view(row: dict[str, Any]) -> RowView:
    """Split an AWB row the way ``eval.py`` does (history bounded by both list lengths)."""
    prompts, responses = _as_list(row.get("prompt", [])), _as_list(row.get("response", []))
    t = turn_index(row)
    history = [(prompts[j], responses[j]) for j in range(min(t, len(prompts), len(responses)))]
    current = row.get("current_prompt") or ""
    if not current and t < len(prompts):
        current = prompts[t]
    truth = responses[t] if t < len(responses) else ""
    return RowView(
        domain=subtask(str(row.get("task", "mcp"))),
        system=str(row.get("system_str") or ""),
        history=history,
        current_prompt=str(current),
        ground_truth_raw=truth,
        turn=t,
    )


def inference_messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """System prompt (when non-empty), the history as user/assistant pairs, then the current action."""
    view = row_view(row)
    messages = [{"role": "system", "content": view.system}] if view.system else []
    for prompt, response in view.history:
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": response})
    messages.append({"role": "user", "content": view.current_prompt})
    return messages
