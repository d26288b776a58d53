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
