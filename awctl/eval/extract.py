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

# One row as the official eval reads it lives with the format; re-exported here for the judges.
from awctl.formats.agentworldbench import (  # noqa: F401
    OBSERVATION_MARKER,
    RowView,
    clean_marker,
    inference_messages,
    row_view,
    turn_index,
)
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
