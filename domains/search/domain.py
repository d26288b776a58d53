"""The search domain: web_search / web_extractor / memory tools over a local documentation corpus."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.errors import CodecError
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .codec import SearchActionCodec, SearchObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment


class SearchDomain(Domain):
    name = "search"
    modality = "text"
    description = (
        "Search agent tools — web_search (ranked results per query), web_extractor (page as Markdown) and a "
        "key-value memory — over a local SQLite FTS5/bm25 engine on a shipped Python-documentation corpus; reads, "
        "writes and serves its own layout, the Qwen web agents' search/visit layout and AgentWorldBench's "
        "web_search/web_extractor/dict_memory layout, each trajectory's layout following its tool list"
    )

    def __init__(self) -> None:
        self.action_codec = SearchActionCodec()
        self.observation_codec = SearchObservationCodec()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import search_prompt_builder

        return search_prompt_builder()

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """The five sections in the tool set of the task's layout (``setup["layout"]``), else of the layout
        the initial state names: the action space declares that tool list, the simulation instruction
        describes that layout."""
        from .env import READY_BY_LAYOUT
        from .prompts import simulation_instruction_for

        layout = str(task.setup.get("layout", "")) if task else ""
        if layout not in READY_BY_LAYOUT:
            by_state = {text: name for name, text in READY_BY_LAYOUT.items()}
            layout = by_state.get(initial_state, "awctl")
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema_for(layout),
            initial_state=initial_state or READY_BY_LAYOUT[layout],
            simulation_instruction=simulation_instruction_for(layout),
        )

    def verifiers(self) -> list[Verifier]:
        from .verifiers import VERIFIERS

        return list(VERIFIERS)

    def importers(self) -> list[Importer]:
        from .importers import OPENAI_CHAT, QWEN_AGENT_LOG

        return [OPENAI_CHAT, QWEN_AGENT_LOG]

    def suites(self) -> list[str]:
        return ["facts", "lookup", "memory", "all", "qwen", "awb"]

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import tasks_for

        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    def faults(self) -> list[Fault]:
        from .faults import FAULTS

        return list(FAULTS)

    # AgentWorldBench bodies are the tool-call JSON and the tool output text. Actions in any accepted
    # shape become canonical, observations that parse are written in their layout's own form (the codecs'
    # ``canonical``; byte-identical in the Qwen layout those rows use); anything else passes through
    # unchanged, and the row converter keeps every body the hooks changed, so a conversion never loses text.
    def from_awb_action(self, body: str) -> str:
        try:
            return self.action_codec.canonical(body)
        except CodecError:
            return body

    def to_awb_action(self, action: str) -> str:
        return self.from_awb_action(action)

    def from_awb_observation(self, body: str) -> str:
        try:
            return self.observation_codec.canonical(body)
        except CodecError:
            return body

    def to_awb_observation(self, observation: str) -> str:
        return self.from_awb_observation(observation)

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        """A session over the local engine; ``config`` may set ``top_k`` and ``layout``, the layout of
        episodes whose task names none. A task's tool set wins (``setup["layout"]``: the suites ``qwen`` and
        ``awb``), and every recorded trajectory declares its own tool list, which is all verifiers read."""
        from .env import SearchEnv

        config = config or {}
        return SearchEnv(top_k=int(config.get("top_k", 5)), layout=str(config.get("layout", "awctl")))

    def real_env_status(self) -> tuple[bool, str]:
        from .engine import CORPUS_FILE

        if not CORPUS_FILE.is_file():
            return False, f"corpus missing: {CORPUS_FILE} (run python -m awctl_domains.search.build_corpus)"
        return True, f"local SQLite FTS5 engine over {CORPUS_FILE.name}"

    def record(self, task: Task, actions: list[str] | None = None, env: Any = None) -> Trajectory:
        """Run ``actions`` (default: the task's reference solution) in a real env and record the episode."""
        from .env import SearchEnv

        env = env or SearchEnv()
        initial = env.reset(task)
        turns = [Turn(action=a, observation=env.step(a).observation) for a in (actions or task.solution)]
        return Trajectory(
            id=task.id,
            domain=self.name,
            source="real:search",
            system=self.sections_for(task, initial),
            turns=turns,
            metadata={"top_k": env.top_k, "layout": env.layout},
        )
