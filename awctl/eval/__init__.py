"""Evaluation: AgentWorldBench-compatible inference, judging and scoring, and the fidelity audit.

* :mod:`awctl.eval.rows` — prediction/judged row files (AWB rows plus ``gen`` and judge keys), resume.
* :mod:`awctl.eval.extract` — what a judge sees: the extracted prediction, the cleaned ground truth and the
  history, built as the official ``eval.py`` builds them.
* :mod:`awctl.eval.infer` — concurrent, resumable world-model inference over AWB rows or trajectories.
* :mod:`awctl.eval.judging` — the judge interface and the row-level judge loop.
* :mod:`awctl.eval.llm_judge` — a rubric judge over any backend (prompts in ``awctl/eval/prompts``).
* :mod:`awctl.eval.deterministic` — a reference-grounded judge that needs no model.
* :mod:`awctl.eval.score` — the official aggregation (per-domain means, both overall conventions).
* :mod:`awctl.eval.audit` — teacher-forced per-action-family fidelity audit.

Nothing here imports torch at module level.
"""

SCORE_DIMENSIONS: tuple[str, ...] = ("format", "factuality", "consistency", "realism", "quality")
