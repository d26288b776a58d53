"""awctl's own stages, backends and judges, registered through the public hooks like any plugin.

Entries are ``"module:attr"`` strings imported at registration; those modules must not import torch or
vllm at module level (heavy imports go inside functions), so listing stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from awctl.hookspecs import hookimpl

STAGES: dict[str, str] = {
    # kind: "module:StageClass"
    "convert": "awctl.stages.data:ConvertStage",
    "verify": "awctl.stages.data:VerifyStage",
    "record": "awctl.stages.record:RecordStage",
    "eval": "awctl.stages.eval:EvalStage",
    "audit": "awctl.stages.eval:AuditStage",
    "simulate": "awctl.stages.simulate:SimulateStage",
    "prep": "awctl.stages.prep:PrepStage",
    "cpt": "awctl.stages.train:CptStage",
    "sft": "awctl.stages.train:SftStage",
    "rl": "awctl.stages.train:RlStage",
    "agent_train": "awctl.stages.agent:AgentTrainStage",
    "agent_eval": "awctl.stages.agent:AgentEvalStage",
    "compare": "awctl.stages.compare:CompareStage",
}

BACKENDS: dict[str, tuple[str, str]] = {
    # name: ("module:factory", description)
    "transformers": ("awctl.models.backends:make_transformers", "Local HF directory or GGUF file, batched."),
    "vllm": ("awctl.models.backends:make_vllm", "vLLM offline engine with prefix caching."),
    "openai": ("awctl.models.backends:make_openai", "Any OpenAI-compatible chat completions endpoint."),
}

JUDGES: dict[str, tuple[str, str]] = {
    # name: ("module:factory", description)
    "deterministic": (
        "awctl.eval.deterministic:deterministic_judge",
        "Reference-grounded, no model: normalised exact match, verifiers, metadata formats.",
    ),
    "llm": (
        "awctl.eval.llm_judge:llm_judge",
        "Rubric judge over any backend (<final_evaluation> JSON, 1-5).",
    ),
}


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@hookimpl
def register_stages(register):  # type: ignore[no-untyped-def]
    for kind, target in STAGES.items():
        register(kind, _resolve(target))


@hookimpl
def register_backends(register):  # type: ignore[no-untyped-def]
    for name, (target, description) in BACKENDS.items():
        register(name, _resolve(target), description)


@hookimpl
def register_judges(register):  # type: ignore[no-untyped-def]
    for name, (target, description) in JUDGES.items():
        register(name, _resolve(target), description)
