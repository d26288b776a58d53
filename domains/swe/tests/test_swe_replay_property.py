"""Property: the verifiers never flag what the real editor prints, whatever the edit sequence."""

import tempfile
from pathlib import Path

from awctl_domains.swe.domain import SweDomain
from awctl_domains.swe.editor import Editor
from awctl_domains.swe.tasks import editor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.domain import run_verifiers
from awctl.trajectory import Trajectory, Turn

DOMAIN = SweDomain()
PATHS = ("/testbed/a.py", "/testbed/b.txt", "/testbed/./a.py", "/testbed//b.txt")
text = st.text(alphabet="ab \t\n\rx=", max_size=40)

op = st.one_of(
    st.tuples(st.just("view"), st.sampled_from(PATHS)),
    st.tuples(st.just("view_range"), st.sampled_from(PATHS), st.integers(-1, 8), st.integers(-1, 8)),
    st.tuples(st.just("create"), st.sampled_from(PATHS), text),
    st.tuples(st.just("create_big"), st.sampled_from(PATHS), st.integers(15990, 16010)),
    st.tuples(st.just("str_replace"), st.sampled_from(PATHS), st.text(alphabet="ab \t\nx=", min_size=1, max_size=4), text),
    st.tuples(st.just("insert"), st.sampled_from(PATHS), st.integers(-1, 9), text),
    st.tuples(st.just("undo_edit"), st.sampled_from(PATHS)),
)


def action_for(item: tuple) -> str:
    kind, path = item[0], item[1]
    if kind == "view":
        return editor("view", path)
    if kind == "view_range":
        return editor("view", path, view_range=[item[2], item[3]])
    if kind == "create":
        return editor("create", path, file_text=item[2])
    if kind == "create_big":
        return editor("create", path, file_text=("x\t" * item[2])[: item[2]])
    if kind == "str_replace":
        return editor("str_replace", path, old_str=item[2], new_str=item[3])
    if kind == "insert":
        return editor("insert", path, insert_line=item[2], new_str=item[3])
    return editor("undo_edit", path)


def _real_session(ops: list[tuple], preexisting: str | None = None) -> Trajectory:
    """The trajectory the real editor prints for ``ops`` in a fresh /testbed."""
    from awctl_domains.swe.codec import SweActionCodec

    codec = SweActionCodec()
    with tempfile.TemporaryDirectory() as tmp:
        ed = Editor(Path(tmp), "/testbed")
        if preexisting is not None:  # a file the trajectory never saw created: its text is unknown
            (Path(tmp) / "b.txt").write_text(preexisting)
        turns = []
        for item in ops:
            action = action_for(item)
            call = codec.parse(action)
            out = ed.run(call.command, call.path, **call.kwargs())
            turns.append(Turn(action=action, observation=out.observation))
    return Trajectory(id="prop", domain="swe", turns=turns)


def _failures(traj: Trajectory) -> list[tuple]:
    return [(i, traj.turns[i].action, bad) for i in range(len(traj.turns))
            if (bad := [r for r in run_verifiers(DOMAIN, traj, i) if not r.ok])]


def test_an_inserted_line_ending_in_a_carriage_return_verifies():
    # Found by the property below: the editor shows the inserted "\r" line as an empty numbered line.
    traj = _real_session([("create", "/testbed/a.py", ""), ("insert", "/testbed/a.py", 0, "=\n\r")])
    assert "\r" in traj.turns[1].observation
    assert _failures(traj) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=10), st.none() | text)
def test_real_editor_observations_always_verify(ops, preexisting):
    assert _failures(_real_session(ops, preexisting)) == []
