"""What a world model sees at turn ``t``: the one place that builds it.

Prep (CPT/SFT token documents), SFT rejection sampling, RL prompts, simulation (``SimEnv``), evaluation
(AgentWorldBench rows) and the fidelity audit all ask this module for their messages, so training and
evaluation cannot disagree on the format by accident (a test checks that the consumers give identical
messages for the same turn).

A view is ``trajectory + turn index + style + prompt variant -> messages``::

    system     the system prompt: ``SystemPrompt.raw`` verbatim when the source gave one, else the domain's
               prompt builder in wording ``variant`` (omitted when empty, as the official eval does)
    user       turn j's action          ┐ the real history, turns 0..t-1
    assistant  turn j's observation     ┘
    user       turn t's action

Two styles:

* ``agentworldbench`` — the official layout: ``### Turn N\\n**Action:**\\n<action>`` user messages and
  ``**Environment Observation:**\\n<observation>`` assistant messages (the domain's ``to_awb_*`` hooks
  render the bodies). A trajectory read from AgentWorldBench reproduces its rows exactly, each row's own
  list lengths included.
* ``awctl`` — the raw action text as the user message, the observation inside
  ``<predicted_observation>`` tags as the assistant message.

The target (what a model is trained to answer for turn ``t``) is ``<think>reasoning</think>`` when the turn
has reasoning, then the history form of the observation inside ``<predicted_observation>`` tags (for the
``awctl`` style the history form already is tagged, so the target equals the history form).

The wording variant is drawn once per trajectory (:func:`prompt_variant`), so every turn of a trajectory
sees the same system prompt, as in the packed documents prep writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator

import awctl.formats.agentworldbench as awb
from awctl.errors import AwctlError
from awctl.prompts import OBSERVATION_TAG
from awctl.trajectory import Trajectory, Turn

if TYPE_CHECKING:
    from awctl.domain import Domain

Style = Literal["awctl", "agentworldbench"]
STYLES: tuple[str, ...] = ("awctl", "agentworldbench")
# Older spellings recipes used for the same two styles.
_ALIASES = {"native": "awctl", "awb": "agentworldbench"}
Message = dict[str, str]


def style_name(name: str) -> Style:
    """The canonical style for ``name`` (``awctl``/``native``, ``agentworldbench``/``awb``)."""
    canonical = _ALIASES.get(name, name)
    if canonical not in STYLES:
        raise AwctlError(f"unknown chat style {name!r}", hint="use 'awctl' or 'agentworldbench'")
    return canonical  # type: ignore[return-value]


def _validate_style(value: Any) -> str:
    try:
        return style_name(str(value))
    except AwctlError as exc:
        raise ValueError(exc.message) from None


#: A chat style as a pydantic field type (stage options, configs): the older spellings are accepted.
ChatStyle = Annotated[Style, BeforeValidator(_validate_style)]


def prompt_variant(seed: int, trajectory_id: str, variants: int) -> int:
    """The wording variant of a trajectory's system prompt: a seeded hash of its id (same for every turn)."""
    digest = hashlib.blake2b(f"{seed}\x00variant\x00{trajectory_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % max(1, variants)


@dataclass(frozen=True)
class Assistant:
    """An assistant message and where its parts are: ``[r0, r1)`` reasoning, ``[o0, o1)`` the observation
    text exactly as the trajectory holds it (``o0 == o1`` when a domain hook rewrote it beyond finding)."""

    body: str
    r0: int = 0
    r1: int = 0
    o0: int = 0
    o1: int = 0


def _tagged(inner: str, reasoning: str | None, observation: str) -> Assistant:
    body, r0, r1 = "", 0, 0
    if reasoning:
        body = "<think>\n"
        r0 = len(body)
        body += reasoning
        r1 = len(body)
        body += "\n</think>\n"
    body += f"<{OBSERVATION_TAG}>\n"
    start = len(body)
    body += inner
    body += f"\n</{OBSERVATION_TAG}>"
    o0, o1 = _locate(inner, observation, start)
    return Assistant(body, r0, r1, o0, o1)


def _locate(inner: str, observation: str, start: int) -> tuple[int, int]:
    # The observation is the end of the AWB response (after the marker) or all of the awctl body.
    if inner.endswith(observation):
        end = start + len(inner)
        return end - len(observation), end
    return start + len(inner), start + len(inner)


def _awb_codec(domain: Domain | None) -> Any:
    return awb.TurnCodec(domain)


@dataclass(frozen=True)
class View:
    """How to render a trajectory for a model: the ``style`` and the domain whose hooks and prompt builder
    apply (``None``: an unregistered domain, identity hooks and the sections as written)."""

    domain: Domain | None = None
    style: Style = "agentworldbench"

    # ── the parts ──
    def system(self, traj: Trajectory, variant: int = 0) -> str:
        """The system prompt text (:func:`awctl.formats.agentworldbench.system_text`)."""
        return awb.system_text(traj, self.domain, variant)

    def user(self, action: str | Turn, index: int) -> str:
        """The user message carrying turn ``index``'s action."""
        if self.style == "awctl":
            return action.action if isinstance(action, Turn) else action
        codec = _awb_codec(self.domain)
        if isinstance(action, Turn):
            return codec.prompt_text(action, index)
        return codec.render_prompt(action, index)

    def history_assistant(self, turn: Turn) -> Assistant:
        """The assistant message of an earlier turn, as the model sees it in its history."""
        if self.style == "awctl":
            return _tagged(turn.observation, None, turn.observation)
        text = _awb_codec(self.domain).response_text(turn)
        o0, o1 = _locate(text, turn.observation, 0)
        return Assistant(text, 0, 0, o0, o1)

    def target_assistant(self, turn: Turn) -> Assistant:
        """The assistant message a model is trained to produce for ``turn`` (tagged, reasoning first)."""
        inner = turn.observation if self.style == "awctl" else _awb_codec(self.domain).response_text(turn)
        return _tagged(inner, turn.reasoning, turn.observation)

    def history_turn(self, traj: Trajectory, j: int, t: int) -> Turn:
        """Turn ``j`` as the history of turn ``t`` shows it (:meth:`Domain.history_observation`)."""
        turn = traj.turns[j]
        text = None if self.domain is None else self.domain.history_observation(traj, j, t)
        return turn if text is None else turn.model_copy(update={"observation": text})

    # ── whole views ──
    def messages_at(
        self, traj: Trajectory, t: int, variant: int = 0, max_history: int | None = None
    ) -> list[Message]:
        """Chat messages for predicting turn ``t`` (0-based); ``max_history`` keeps only the most recent
        earlier turns. Raises ``IndexError`` when ``t`` is out of range."""
        if not 0 <= t < len(traj.turns):
            raise IndexError(f"trajectory {traj.id!r} has {len(traj.turns)} turns; no turn {t}")
        if self.style == "agentworldbench" and max_history is None:
            row = _awb_row_messages(traj, t, self.domain)
            if row is not None:
                return row
        messages: list[Message] = []
        system = self.system(traj, variant)
        if system:
            messages.append({"role": "system", "content": system})
        first = 0 if max_history is None else max(0, t - max_history)
        for j in range(first, t):
            messages.append({"role": "user", "content": self.user(traj.turns[j], j)})
            messages.append({"role": "assistant", "content": self.history_assistant(self.history_turn(traj, j, t)).body})
        messages.append({"role": "user", "content": self.user(traj.turns[t], t)})
        return messages

    def target_at(self, traj: Trajectory, t: int) -> str:
        return self.target_assistant(traj.turns[t]).body

    def conversation(
        self, traj: Trajectory, system: str, targets: Literal["all", "last"] = "all"
    ) -> tuple[list[Message], list[Assistant]]:
        """The whole trajectory as one conversation (what prep tokenizes) and its assistant parts.

        Earlier turns' assistant messages are in history form; with ``targets="last"`` they are the last
        turn's history (:meth:`history_turn`), so the prefix before the last answer equals
        :meth:`messages_at` for the last turn, and with ``targets="all"`` (every observation is trained on)
        they are as recorded. The answers trained on (every turn with ``targets="all"`` in the ``awctl``
        style, where both forms are one; else the last turn) are in target form."""
        messages: list[Message] = [{"role": "system", "content": system}]
        parts = []
        last = len(traj.turns) - 1
        for j, turn in enumerate(traj.turns):
            if j == last or targets == "all" and self.style == "awctl":
                part = self.target_assistant(turn)
            else:
                part = self.history_assistant(self.history_turn(traj, j, last) if targets == "last" else turn)
            parts.append(part)
            messages.append({"role": "user", "content": self.user(turn, j)})
            messages.append({"role": "assistant", "content": part.body})
        return messages, parts


def view_for(traj: Trajectory, domains: Mapping[str, Domain], style: str = "agentworldbench") -> View:
    """The :class:`View` of ``traj`` in ``style`` with its domain looked up in ``domains``."""
    return View(domains.get(traj.domain), style_name(style))


def messages_at(
    traj: Trajectory,
    t: int,
    domains: Mapping[str, Domain],
    style: str = "agentworldbench",
    variant: int = 0,
    max_history: int | None = None,
) -> list[Message]:
    """:meth:`View.messages_at` of ``traj``'s turn ``t`` with its domain looked up in ``domains``."""
    return view_for(traj, domains, style).messages_at(traj, t, variant, max_history)


def target_at(traj: Trajectory, t: int, domains: Mapping[str, Domain], style: str = "agentworldbench") -> str:
    """:meth:`View.target_at`: the assistant content a model is trained to produce for turn ``t``."""
    if not 0 <= t < len(traj.turns):
        raise IndexError(f"trajectory {traj.id!r} has {len(traj.turns)} turns; no turn {t}")
    return view_for(traj, domains, style).target_at(traj, t)


def _awb_row_messages(traj: Trajectory, t: int, domain: Domain | None) -> list[Message] | None:
    """For a trajectory read from AgentWorldBench: exactly the messages the official eval builds for the
    row of turn ``t`` (its own list lengths bound the history); ``None`` when no row evaluates ``t``."""
    meta = awb.awb_metadata(traj)
    if meta is None:
        return None
    rec = next((r for r in meta["rows"] if _row_turn(r) == t), None)
    if rec is None:
        return None
    codec = awb.TurnCodec(domain)
    prompts, responses = awb.full_lists(traj, codec, meta)
    return awb.inference_messages(awb.rebuild_row(rec, meta["task"], traj.system.render(), prompts, responses))


def _row_turn(rec: dict[str, Any]) -> int | None:
    turn_idx = rec.get("fields", {}).get("turn_idx", 1)
    if isinstance(turn_idx, int) and not isinstance(turn_idx, bool):
        return max(turn_idx - 1, 0)
    return None


def evaluation_rows(traj: Trajectory, domains: Mapping[str, Domain]) -> list[dict[str, Any]]:
    """The AgentWorldBench rows ``awctl eval`` asks a model about for ``traj``.

    They are :func:`awctl.formats.agentworldbench.trajectory_to_rows` (every observation as recorded, which
    the judges and the copy baseline read); for an awctl trajectory, a row whose history the view shows
    otherwise (:meth:`View.history_turn`) also carries those assistant texts in ``awctl.history`` (turn
    index -> text), so :func:`~awctl.formats.agentworldbench.inference_messages` gives the model
    :meth:`View.messages_at`. AgentWorldBench-sourced trajectories give their own rows back unchanged."""
    rows = awb.trajectory_to_rows(traj, domains)
    if awb.awb_metadata(traj) is not None:
        return rows
    view = view_for(traj, domains)
    for row in rows:
        t = int(row["turn_idx"]) - 1
        stand_ins = {}
        for j in range(t):
            seen = view.history_turn(traj, j, t)
            if seen is not traj.turns[j]:
                stand_ins[str(j)] = view.history_assistant(seen).body
        if stand_ins:
            row[awb.AWCTL_KEY] = {**row[awb.AWCTL_KEY], "history": stand_ins}
    return rows


def evaluated_turns(traj: Trajectory) -> list[int]:
    """The turns a trajectory is evaluated on: the rows' ``turn_idx`` for AgentWorldBench-sourced
    trajectories (in row order, without repeats), else every turn."""
    meta = awb.awb_metadata(traj)
    if meta is None:
        return list(range(len(traj.turns)))
    out: list[int] = []
    for rec in meta["rows"]:
        t = _row_turn(rec)
        if t is not None and t < len(traj.turns) and t not in out:
            out.append(t)
    return out


def chat_records(
    traj: Trajectory, domains: Mapping[str, Domain], style: str = "agentworldbench", variant: int = 0
) -> Iterator[dict[str, Any]]:
    """One record per evaluated turn: ``{id, trajectory_id, domain, turn, messages, target, reference}``
    (``target``: the tagged training answer; ``reference``: the observation in history form)."""
    view = view_for(traj, domains, style)
    for t in evaluated_turns(traj):
        yield {
            "id": f"{traj.id}_turn{t + 1}",
            "trajectory_id": traj.id,
            "domain": traj.domain,
            "turn": t,
            "messages": view.messages_at(traj, t, variant),
            "target": view.target_at(traj, t),
            "reference": view.history_assistant(traj.turns[t]).body,
        }
