"""The search domain: web_search / web_extractor / memory tools over a local documentation corpus."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Importer, Perturbation, Task, Verifier
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
        "key-value memory — over a local SQLite FTS5/bm25 engine on a shipped Python-documentation corpus; reads "
        "and writes its own output layout and that of the Qwen web agents' search/visit tools"
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
        """The five sections; the simulation instruction describes the layout the initial state names."""
        from .env import READY, READY_QWEN
        from .prompts import simulation_instruction_for

        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state=initial_state or READY,
            simulation_instruction=simulation_instruction_for(
                "qwen" if initial_state == READY_QWEN else "awctl"
            ),
        )

    def verifiers(self) -> list[Verifier]:
        from .verifiers import VERIFIERS

        return list(VERIFIERS)

    def importers(self) -> list[Importer]:
        from .importers import OPENAI_CHAT

        return [OPENAI_CHAT]

    def suites(self) -> list[str]:
        return ["facts", "lookup", "memory", "all"]

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import tasks_for

        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    # AgentWorldBench bodies are the tool-call JSON and the tool output text. Actions in any accepted
    # shape become canonical; observations that parse are re-rendered (byte-identical in the Qwen layout
    # those rows use); anything else passes through unchanged so a conversion never loses text.
    def from_awb_action(self, body: str) -> str:
        try:
            return self.action_codec.render(self.action_codec.parse(body))
        except CodecError:
            return body

    def to_awb_action(self, action: str) -> str:
        return self.from_awb_action(action)

    def from_awb_observation(self, body: str) -> str:
        try:
            return self.observation_codec.render(self.observation_codec.parse(body))
        except CodecError:
            return body

    def to_awb_observation(self, observation: str) -> str:
        return self.from_awb_observation(observation)

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
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
