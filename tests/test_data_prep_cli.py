"""``awctl data prep`` / ``awctl data prep merge`` through the real CLI, and the ``prep`` stage kind."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from awctl import plugins
from awctl.plugins import get_registry

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "prep"
spec = importlib.util.spec_from_file_location("prep_datagen_cli", FIXTURES / "datagen.py")
datagen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(datagen)  # type: ignore[union-attr]


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(FIXTURES / "plugins"))
    plugins.get_registry(refresh=True)
    path = tmp_path / "in.jsonl"
    rows = datagen.make_rows(60, [f"s{k}" for k in range(12)], seed=2)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    yield path
    plugins._REGISTRY = None


def _cli(*args: str):
    from awctl.cli.main import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_prep_then_merge_slices_from_the_command_line(data: Path, tmp_path: Path) -> None:
    base = ["data", "prep", str(data), "--tokenizer", "train:600", "--block-size", "256", "--seed", "1"]
    res = _cli(*base, "-o", str(tmp_path / "full"), "--keep", "transform=0.25")
    assert res.exit_code == 0, res.output
    assert "loss masking" in res.output and "transform" in res.output
    full = json.loads((tmp_path / "full" / "manifest.json").read_text())
    assert full["config"]["mask"]["keep"]["transform"] == 0.25
    assert full["counts"]["quarantined"] == 1
    tok = str(tmp_path / "full" / "tokenizer")
    for i in range(2):
        res = _cli(
            "data",
            "prep",
            "run",
            str(data),
            "--tokenizer",
            tok,
            "--block-size",
            "256",
            "--seed",
            "1",
            "--keep",
            "transform=0.25",
            "--shard",
            f"{i}/2",
            "-o",
            str(tmp_path / f"s{i}"),
            "--json",
        )
        assert res.exit_code == 0, res.output
        assert json.loads(res.output)["slice"] == f"{i}/2"
    res = _cli(
        "data",
        "prep",
        "merge",
        str(tmp_path / "s0"),
        str(tmp_path / "s1"),
        "-o",
        str(tmp_path / "m"),
        "--json",
    )
    assert res.exit_code == 0, res.output
    merged = json.loads(res.output)
    assert merged["counts"]["kept"] == full["counts"]["kept"]
    assert (tmp_path / "m" / "quarantine.jsonl").read_text().count('"check": "json"') == 1


def test_merge_refuses_outputs_of_different_runs(data: Path, tmp_path: Path) -> None:
    from awctl.errors import AwctlError

    for name, seed in (("a", "1"), ("b", "2")):
        res = _cli(
            "data",
            "prep",
            str(data),
            "--tokenizer",
            "train:600",
            "-o",
            str(tmp_path / name),
            "--seed",
            seed,
            "-q",
            "--block-size",
            "128",
        )
        assert res.exit_code == 0, res.output
    with pytest.raises(AwctlError, match="cannot merge"):
        _cli("data", "prep", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "m"))


def test_bad_options_name_the_problem(data: Path, tmp_path: Path) -> None:
    from awctl.errors import AwctlError

    with pytest.raises(AwctlError, match="shard"):
        _cli("data", "prep", str(data), "-o", str(tmp_path / "x"), "--shard", "3/2")
    with pytest.raises(AwctlError, match="CATEGORY=P"):
        _cli("data", "prep", str(data), "-o", str(tmp_path / "x"), "--keep", "transform")


def test_prep_stage_resolves_stage_outputs_and_reports(data: Path, tmp_path: Path) -> None:
    reg = plugins.get_registry()
    stage_cls = reg.stage("prep").obj
    with pytest.raises(Exception, match="extra"):
        stage_cls.Options(inputs=["x"], colour="red")
    stage = stage_cls(
        stage_cls.Options(inputs=["@record.trajectories"], tokenizer="train:600", block_size=128)
    )
    assert stage.input_refs() == ["@record.trajectories"]
    from awctl.stages import StageContext

    metrics = tmp_path / "metrics.jsonl"
    ctx = StageContext(
        name="prep",
        run_dir=tmp_path,
        stage_dir=tmp_path / "stages" / "prep",
        project=SimpleNamespace(resolve=lambda p: Path(p)),
        recipe={},
        log=SimpleNamespace(info=lambda *a, **k: None),
        registry=get_registry(),
        artifacts={"record": {"trajectories": data}},
        seed=4,
        _metrics_path=metrics,
    )
    ctx.stage_dir.mkdir(parents=True)
    result = stage.run(ctx)
    manifest = json.loads(result.outputs["manifest"].read_text())
    assert manifest["config"]["seed"] == 4 and manifest["config"]["inputs"] == [str(data)]
    assert result.outputs["tokenizer"].is_dir() and result.summary["kept"] == 60
    assert "| transform |" in result.report
    assert json.loads(metrics.read_text().splitlines()[-1])["kept"] == 60
