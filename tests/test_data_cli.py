"""``awctl data convert|verify|prep`` and the ``convert``/``verify`` stage kinds, with a real loose plugin."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import awctl.plugins as plugins
from awctl.cli import data as data_cli
from awctl.cli.data import data
from awctl.config import ProjectConfig
from awctl.errors import AwctlError
from awctl.stages import StageContext
from awctl.stages.data import ConvertOptions, ConvertStage, VerifyOptions, VerifyStage
from awctl.trajectory import Trajectory, Turn, read_trajectories, write_trajectories

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "awb"

TOY_PLUGIN = '''
"""A tiny domain for the data CLI tests: actions must start with "cmd ", observations may not be empty."""
from pathlib import Path

from awctl.domain import ActionCodec, Domain, Importer, ObservationCodec, VerifyResult, verifier
from awctl.errors import CodecError
from awctl.hookspecs import hookimpl
from awctl.trajectory import Trajectory, Turn


class Actions(ActionCodec):
    def parse(self, text):
        if not text.startswith("cmd "):
            raise CodecError("action must start with 'cmd '", where="action")
        return text[4:]

    def render(self, action):
        return "cmd " + action


class Observations(ObservationCodec):
    def parse(self, text):
        if not text:
            raise CodecError("empty observation")
        return text

    def render(self, observation):
        return observation


@verifier("no_fail_marker", "observations never say FAIL")
def no_fail_marker(ctx):
    return VerifyResult("no_fail_marker", "FAIL" not in ctx.observation, "observation says FAIL")


@verifier("ls_lists_files", "`cmd ls` shows file names (other commands: abstains)")
def ls_lists_files(ctx):
    if ctx.action != "cmd ls":
        return None
    return VerifyResult("ls_lists_files", bool(ctx.observation.split()), "ls printed nothing")


@verifier("never_applies", "abstains on everything")
def never_applies(ctx):
    return None


def load_toylog(path):
    turns = []
    for line in Path(path).read_text().splitlines():
        action, _, obs = line.partition(" => ")
        turns.append(Turn(action=action, observation=obs))
    yield Trajectory(id=Path(path).stem, domain="toy", source="toylog", turns=turns)


class Toy(Domain):
    name = "toy"
    action_codec = Actions()
    observation_codec = Observations()

    def verifiers(self):
        return [no_fail_marker, ls_lists_files, never_applies]

    def importers(self):
        return [Importer("toylog", "a => b lines", ("*.toylog",), load_toylog)]


@hookimpl
def register_domains(register):
    register(Toy())
'''


@pytest.fixture
def toy_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_domain.py").write_text(TOY_PLUGIN)
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(folder))
    monkeypatch.delenv("AWCTL_LOAD_PLUGINS", raising=False)
    monkeypatch.setattr(plugins, "_REGISTRY", None)
    assert "toy" in plugins.get_registry().domains, plugins.get_registry().problems
    return folder


def _toy_trajectories(path: Path) -> None:
    write_trajectories(
        path,
        [
            Trajectory(id="good", domain="toy", turns=[Turn(action="cmd ls", observation="a b")]),
            Trajectory(
                id="bad",
                domain="toy",
                turns=[Turn(action="cmd ok", observation="fine"), Turn(action="ls", observation="FAIL")],
            ),
            Trajectory(id="alien", domain="martian", turns=[Turn(action="x", observation="y")]),
        ],
    )


def _awctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from awctl.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )


# ── convert ──────────────────────────────────────────────────────────────────────────────────────────


def test_convert_awb_to_awctl_and_back_is_byte_identical(tmp_path: Path) -> None:
    runner = CliRunner()
    src = FIXTURES / "terminal_test.jsonl"
    mid, out = tmp_path / "t.jsonl.gz", tmp_path / "back.jsonl"
    res = runner.invoke(
        data, ["convert", "--from", "agentworldbench", "--to", "awctl", str(src), "-o", str(mid)]
    )
    assert res.exit_code == 0, res.output
    assert "read 2 trajectories from 1 file(s); wrote 2 trajectories" in res.output
    assert [t.id for t in read_trajectories(mid)] == ["terminal_0", "terminal_1"]
    res = runner.invoke(data, ["convert", "--from", "awctl", "--to", "awb", str(mid), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote 5 rows" in res.output
    assert out.read_bytes() == src.read_bytes()


def test_convert_several_inputs_to_chat(tmp_path: Path) -> None:
    out = tmp_path / "chat.jsonl"
    inputs = [str(FIXTURES / f"{d}_test.jsonl") for d in ("mcp", "os")]
    res = CliRunner().invoke(data, ["convert", "--from", "awb", "--to", "chat", *inputs, "-o", str(out)])
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 10
    assert {r["domain"] for r in records} == {"mcp", "os"}
    assert all(r["messages"][-1]["role"] == "user" and r["target"] for r in records)


def test_convert_with_a_domain_importer(tmp_path: Path, toy_plugin: Path) -> None:
    log = tmp_path / "session.toylog"
    log.write_text("cmd ls => a b\ncmd pwd => /\n")
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(data, ["convert", "--from", "toylog", str(log), "-o", str(out)])
    assert res.exit_code == 0, res.output
    (traj,) = read_trajectories(out)
    assert (traj.id, traj.domain, [t.observation for t in traj.turns]) == ("session", "toy", ["a b", "/"])


def test_convert_unknown_format_is_one_line_with_a_hint(tmp_path: Path) -> None:
    proc = _awctl(
        "data", "convert", "--from", "nosuch", str(FIXTURES / "os_test.jsonl"), "-o", str(tmp_path / "o")
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "error: unknown input format 'nosuch'"
    assert lines[1].startswith("hint: known input formats: ")
    assert "agentworldbench" in lines[1] and "awctl" in lines[1]


def test_convert_missing_input_and_bad_row_are_reported(tmp_path: Path) -> None:
    with pytest.raises(AwctlError, match="input file\\(s\\) not found"):
        CliRunner().invoke(
            data, ["convert", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o")], catch_exceptions=False
        )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "os", "prompt": 3}\n')
    with pytest.raises(AwctlError, match=r"bad\.jsonl:1: field 'prompt'"):
        CliRunner().invoke(
            data, ["convert", "--from", "awb", str(bad), "-o", str(tmp_path / "o")], catch_exceptions=False
        )


# ── verify ───────────────────────────────────────────────────────────────────────────────────────────


def test_verify_reports_each_failing_check_with_trajectory_and_turn(tmp_path: Path, toy_plugin: Path) -> None:
    path = tmp_path / "toy.jsonl"
    _toy_trajectories(path)
    res = CliRunner().invoke(data, ["verify", str(path), "--json"])
    assert res.exit_code == 1
    report = json.loads(res.output)
    assert (report["trajectories"], report["turns"]) == (3, 3)
    assert report["summary"]["action_parse"] == {"passed": 2, "failed": 1, "abstained": 0}
    assert report["summary"]["no_fail_marker"] == {"passed": 2, "failed": 1, "abstained": 0}
    assert report["summary"]["observation_parse"] == {"passed": 3, "failed": 0, "abstained": 0}
    assert report["summary"]["domain"] == {"passed": 2, "failed": 1, "abstained": 0}
    (fail,) = report["failures"]["action_parse"]
    assert (fail["trajectory"], fail["turn"]) == ("bad", 1)
    assert "must start with 'cmd '" in fail["message"]
    assert report["failures"]["domain"][0]["trajectory"] == "alien"
    assert "'martian' is not registered" in report["failures"]["domain"][0]["message"]

    human = CliRunner().invoke(data, ["verify", str(path)])
    assert human.exit_code == 1
    assert "FAIL action_parse: bad turn 1: CodecError: action: action must start with 'cmd '" in human.output
    assert "3 check(s) failed" in human.output


def test_verify_report_counts_checked_passed_failed_and_abstained_per_verifier(
    tmp_path: Path, toy_plugin: Path
) -> None:
    path = tmp_path / "toy.jsonl"
    _toy_trajectories(path)
    report = json.loads(CliRunner().invoke(data, ["verify", str(path), "--json"]).output)
    assert report["summary"]["ls_lists_files"] == {"passed": 1, "failed": 0, "abstained": 2}
    assert report["summary"]["never_applies"] == {"passed": 0, "failed": 0, "abstained": 3}
    human = CliRunner().invoke(data, ["verify", str(path), "--report"]).output
    assert "abstained" in human and "checked" in human
    assert "checked nothing on this data (abstained on every turn): never_applies" in human


def test_verify_passing_file_exits_zero(tmp_path: Path, toy_plugin: Path) -> None:
    path = tmp_path / "ok.jsonl"
    write_trajectories(
        path, [Trajectory(id="g", domain="toy", turns=[Turn(action="cmd a", observation="b")])]
    )
    res = CliRunner().invoke(data, ["verify", str(path)])
    assert res.exit_code == 0, res.output
    assert "all checks passed" in res.output


# ── prep is lazy ─────────────────────────────────────────────────────────────────────────────────────


def test_data_help_lists_prep_without_importing_it() -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom awctl.cli.main import cli\n"
        "r = CliRunner().invoke(cli, ['data', '--help'])\n"
        "assert r.exit_code == 0, r.output\nassert 'prep' in r.output and 'convert' in r.output, r.output\n"
        "assert 'awctl.cli.data_prep' not in sys.modules\nprint('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_missing_lazy_command_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(data_cli.LAZY_COMMANDS, "prep", ("awctl.cli.no_such_module:prep", "x"))
    with pytest.raises(AwctlError, match="`awctl data prep` is not available"):
        CliRunner().invoke(data, ["prep", "--help"], catch_exceptions=False)


# ── stages ───────────────────────────────────────────────────────────────────────────────────────────


class _Log:
    def info(self, *args: object, **kwargs: object) -> None:
        pass


def _ctx(tmp_path: Path, name: str, artifacts: dict | None = None) -> StageContext:
    stage_dir = tmp_path / "run" / name
    stage_dir.mkdir(parents=True)
    return StageContext(
        name, tmp_path / "run", stage_dir, ProjectConfig(root=REPO), {}, _Log(), plugins.get_registry(),
        artifacts=artifacts or {},
    )


def test_convert_and_verify_stages(tmp_path: Path, toy_plugin: Path) -> None:
    opts = ConvertOptions.model_validate({"inputs": ["tests/fixtures/awb/android_test.jsonl"], "from": "awb"})
    stage = ConvertStage(opts)
    assert stage.input_refs() == ["tests/fixtures/awb/android_test.jsonl"]
    result = stage.run(_ctx(tmp_path, "import"))
    assert result.summary["trajectories"] == 2
    traj_file = result.outputs["trajectories"]
    assert [t.domain for t in read_trajectories(traj_file)] == ["android", "android"]

    toy = tmp_path / "toy.jsonl"
    _toy_trajectories(toy)
    ok = VerifyStage(VerifyOptions(input="@prev.t", fail_on_error=False)).run(
        _ctx(tmp_path, "check", {"prev": {"t": toy}})
    )
    assert json.loads(ok.outputs["report"].read_text())["failed"] == 3
    assert "| action_parse | 2 | 1 |" in ok.report
    with pytest.raises(AwctlError, match="3 check\\(s\\) failed"):
        VerifyStage(VerifyOptions(input=str(toy))).run(_ctx(tmp_path, "strict"))


def test_stage_options_are_validated_without_running() -> None:
    with pytest.raises(ValueError, match="unknown output format"):
        ConvertOptions.model_validate({"inputs": ["a"], "to": "xml"})
    with pytest.raises(ValueError, match="file name inside the stage directory"):
        ConvertOptions.model_validate({"inputs": ["a"], "output": "../x.jsonl"})
    with pytest.raises(ValueError):
        ConvertOptions.model_validate({"inputs": []})


def test_stages_are_registered() -> None:
    reg = plugins.build_registry([])
    assert reg.stage("convert").obj is ConvertStage
    assert reg.stage("verify").obj is VerifyStage


def test_registry_importer_names_are_not_written_into_help() -> None:
    # `awctl data convert --help` must not need the registry (fast, no plugin imports).
    res = CliRunner().invoke(data, ["convert", "--help"])
    assert res.exit_code == 0 and "--from" in res.output
    assert textwrap.dedent(data_cli.convert.help or "").strip().startswith("Convert INPUT files")
