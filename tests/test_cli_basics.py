"""CLI basics: version, lazy imports, one-line errors, doctor."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from awctl import __version__

HEAVY = ("torch", "vllm", "transformers", "deepspeed")


def test_version(awctl):
    out = awctl("--version")
    assert out.returncode == 0 and __version__ in out.stdout


@pytest.mark.parametrize("argv", [["--help"], ["domains"], ["domains", "--json"], ["plugins", "--json"],
                                  ["recipes", "--help"], ["data", "--help"]])
def test_listing_commands_import_neither_torch_nor_vllm(argv):
    code = (
        "import sys\n"
        "from awctl.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(loaded), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY=\n" in out.stderr, out.stderr[-2000:]


def test_library_errors_are_one_line_with_a_hint(awctl):
    out = awctl("record", "--domain", "no-such-domain", "-o", "/tmp/x.jsonl")
    assert out.returncode == 2
    assert out.stderr.startswith("error: unknown domain 'no-such-domain'")
    assert "hint: known domains:" in out.stderr
    assert "Traceback" not in out.stderr


def test_debug_shows_the_traceback(awctl):
    out = awctl("--debug", "record", "--domain", "no-such-domain", "-o", "/tmp/x.jsonl")
    assert out.returncode != 0 and "Traceback" in out.stderr


def test_usage_error_names_the_missing_option(awctl):
    out = awctl("record")
    assert out.returncode == 2 and "--domain" in out.stderr


def test_doctor_reports_every_component(awctl):
    out = awctl("doctor", "--json")
    assert out.returncode == 0, out.stderr
    components = {c["component"]: c for c in json.loads(out.stdout)}
    for name in ("torch", "transformers", "vllm", "deepspeed", "docker engine", "bubblewrap", "chromium", "mcp"):
        assert name in components
        assert components[name]["enables"]
    assert components["torch"]["ok"] and "CPU" in components["torch"]["detail"] or "CUDA" in components["torch"]["detail"]


def test_json_output_is_the_json_document_alone(tmp_path, awctl):
    # A library that logs to stdout while a --json command runs (DeepSpeed's accelerator warning does) must
    # not corrupt the document: its line goes to stderr.
    (tmp_path / "noisy.py").write_text(
        "import click\n"
        "from awctl.hookspecs import hookimpl\n"
        "from awctl.cli.output import emit_json\n\n"
        "@click.command()\n"
        "@click.option('--json', 'as_json', is_flag=True)\n"
        "def noisy(as_json):\n"
        "    print('[WARNING] Setting accelerator to CPU.')\n"
        "    emit_json({'ok': True})\n\n"
        "@hookimpl\n"
        "def register_commands(register):\n"
        "    register('noisy', 'noisy:noisy')\n"
    )
    out = awctl("noisy", "--json", env={"AWCTL_PLUGINS_DIR": str(tmp_path), "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"ok": True}
    assert "Setting accelerator to CPU" in out.stderr
