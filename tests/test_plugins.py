"""Plugin discovery: built-ins, entry points, loose files, allow/block lists, tracing, failure isolation."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from awctl import hookspecs

REPO = Path(__file__).resolve().parents[1]

BROKEN = "raise RuntimeError('this plugin is broken on purpose')\n"

DUPLICATE = '''
from awctl.hookspecs import hookimpl
from awctl.domain import Domain, ActionCodec, ObservationCodec

class _C(ActionCodec):
    def parse(self, text): return text
    def render(self, a): return a

class _O(ObservationCodec):
    def parse(self, text): return text
    def render(self, o): return o

class Dup(Domain):
    name = "{name}"
    action_codec = _C()
    observation_codec = _O()

@hookimpl
def register_domains(register):
    register(Dup())

@hookimpl
def register_commands(register):
    register("hello", "awctl_local_plugins.{module}:hello", "Say hello")
    register("domains", "awctl_local_plugins.{module}:hello", "shadow attempt")

import click

@click.command()
def hello():
    click.echo("hello from a plugin command")
'''


def _plugin_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_broken_local_plugin_is_reported_and_domains_still_work(tmp_path, awctl):
    folder = _plugin_dir(tmp_path, {"broken.py": BROKEN})
    env = {"AWCTL_PLUGINS_DIR": str(folder)}
    plugins = awctl("plugins", "--json", env=env)
    assert plugins.returncode == 0, plugins.stderr
    entry = next(p for p in json.loads(plugins.stdout) if p["name"] == "broken")
    assert entry["ok"] is False and entry["origin"] == "local"
    assert "RuntimeError: this plugin is broken on purpose" in entry["errors"][0]
    assert "broken.py:1" in entry["errors"][0]
    domains = awctl("domains", "--json", env=env)
    assert domains.returncode == 0, domains.stderr
    assert isinstance(json.loads(domains.stdout), list)
    doctor = awctl("doctor", "--json", env=env)
    plugin_check = next(c for c in json.loads(doctor.stdout) if c["component"] == "plugins")
    assert not plugin_check["ok"] and "broken" in plugin_check["detail"]


def test_duplicate_domain_is_refused_and_blamed_on_the_later_plugin(tmp_path, awctl):
    folder = _plugin_dir(tmp_path, {
        "a_first.py": DUPLICATE.format(name="twin", module="a_first"),
        "b_second.py": DUPLICATE.format(name="twin", module="b_second").replace('"hello"', '"hello2"'),
    })
    out = json.loads(awctl("plugins", "--json", env={"AWCTL_PLUGINS_DIR": str(folder)}).stdout)
    first = next(p for p in out if p["name"] == "a_first")
    second = next(p for p in out if p["name"] == "b_second")
    assert first["registered"]["domains"] == ["twin"]
    assert any("domain 'twin' is already registered by plugin 'a_first'" in e for e in second["errors"])
    # A plugin command may not shadow a core command, and the refusal is reported.
    assert any("would shadow a core command" in e for e in first["errors"])


def test_plugin_command_runs_and_help_lists_it_without_importing_it(tmp_path, awctl):
    folder = _plugin_dir(tmp_path, {"greeter.py": DUPLICATE.format(name="greet", module="greeter")})
    env = {"AWCTL_PLUGINS_DIR": str(folder)}
    ran = awctl("hello", env=env)
    assert ran.returncode == 0 and "hello from a plugin command" in ran.stdout
    helped = awctl("--help", env=env)
    assert re.search(r"hello\s+Say hello \[plugin greeter\]", helped.stdout)


MISSPELLED = '''
from awctl.hookspecs import hookimpl


@hookimpl
def register_domain(register):  # the hook is register_domains
    raise AssertionError("never called")
'''


def test_a_misspelled_hook_is_a_plugin_problem_not_a_silent_no_op(tmp_path, awctl):
    folder = _plugin_dir(tmp_path, {"typo.py": MISSPELLED})
    out = json.loads(awctl("plugins", "--json", env={"AWCTL_PLUGINS_DIR": str(folder)}).stdout)
    typo = next(p for p in out if p["name"] == "typo")
    assert not typo["ok"]
    assert typo["errors"] == ["hook 'register_domain' matches no awctl hook; did you mean 'register_domains'?"]


def test_allow_list_and_block_list(tmp_path, awctl):
    folder = _plugin_dir(tmp_path, {"broken.py": BROKEN, "other.py": BROKEN})
    env = {"AWCTL_PLUGINS_DIR": str(folder), "AWCTL_LOAD_PLUGINS": "other", "AWCTL_BLOCK_PLUGINS": "terminal"}
    names = {p["name"] for p in json.loads(awctl("plugins", "--json", env=env).stdout)}
    assert "other" in names and "broken" not in names and "terminal" not in names
    assert "awctl" in names  # built-ins are not subject to the allow-list


def test_trace_switch_prints_every_hook_call(awctl):
    out = awctl("--trace-plugins", "domains", "--json")
    assert out.returncode == 0
    for hook in ("register_stages", "register_backends", "register_judges"):
        assert f"call {hook} of awctl" in out.stderr
    assert "awctl registered stage 'record'" in out.stderr
    assert "[awctl plugins] loaded" in out.stderr


def test_third_party_package_installs_and_appears_with_no_core_change(tmp_path, awctl):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-compile",
         "--target", str(target), str(REPO / "plugins" / "awctl-example-domain")],
        check=True, capture_output=True, text=True, timeout=300,
    )
    env = {"PYTHONPATH": str(target)}
    domains = json.loads(awctl("domains", "--json", env=env).stdout)
    calc = next(d for d in domains if d["name"] == "calc")
    assert calc["plugin"] == "calc" and calc["suites"] == {"basic": 3}
    plugins = json.loads(awctl("plugins", "--json", env=env).stdout)
    entry = next(p for p in plugins if p["name"] == "calc")
    assert entry["origin"] == "entrypoint" and entry["version"] == "0.1.0" and entry["ok"]
    # The plugin's real environment records trajectories that pass its own checkers.
    out = tmp_path / "calc.jsonl"
    rec = awctl("record", "--domain", "calc", "-o", str(out), "--json", env=env)
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)["passed"] == 3
    # The plugin's own test suite (conformance kit included) passes against the installed package, as it
    # would in the plugin's CI.
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "tests"],
        cwd=REPO / "plugins" / "awctl-example-domain", env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, timeout=600,
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout and "skipped" not in tests.stdout


def test_a_copied_builtin_domain_folder_works_unchanged_as_a_third_party_plugin(tmp_path, awctl):
    # Every built-in domain imports its own modules relatively and the core as awctl.*: copy the folder
    # into a new package, add an entry point, and it is the same domain (the built-in one blocked).
    import shutil

    pkg = tmp_path / "src"
    shutil.copytree(REPO / "domains" / "search", pkg / "my_search", ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (pkg / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "my-search"\nversion = "1.0"\n'
        '[project.entry-points.awctl]\nmy_search = "my_search.plugin"\n'
        '[tool.setuptools]\npackages = ["my_search"]\n'
        '[tool.setuptools.package-data]\nmy_search = ["corpus/*"]\n'
    )
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-compile",
         "--target", str(target), str(pkg)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    env = {"PYTHONPATH": str(target), "AWCTL_BLOCK_PLUGINS": "search"}
    domains = {d["name"]: d for d in json.loads(awctl("domains", "--json", env=env).stdout)}
    assert domains["search"]["plugin"] == "my_search"
    builtin = {d["name"]: d for d in json.loads(awctl("domains", "--json").stdout)}["search"]
    assert {k: v for k, v in domains["search"].items() if k != "plugin"} == \
        {k: v for k, v in builtin.items() if k != "plugin"}
    out = tmp_path / "s.jsonl"
    rec = awctl("record", "--domain", "search", "--tasks", "facts", "--limit", "2", "-o", str(out), "--json",
                env=env)
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)["passed"] == 2


@pytest.mark.parametrize("name", [n for n, f in vars(hookspecs).items() if n.startswith("register_")])
def test_every_hook_is_documented_and_tested(name):
    fn = getattr(hookspecs, name)
    assert inspect.getdoc(fn) and len(inspect.getdoc(fn)) > 60, f"{name} needs a docstring"
    tests = "".join(p.read_text() for p in (REPO / "tests").glob("test_*.py"))
    assert f"def {name}" in tests or f"{name}(" in tests, f"no test implements {name}"


KINDS_PLUGIN = '''
from awctl.hookspecs import hookimpl
from awctl.stages import Stage, StageResult

class EchoStage(Stage):
    """Writes nothing; proves stage registration."""
    kind = "echo"
    def run(self, ctx):
        return StageResult()

def make_backend(**options):
    return ("backend", options)

def make_judge(**options):
    return ("judge", options)

@hookimpl
def register_backends(register):
    register("echo-backend", make_backend, "test backend")

@hookimpl
def register_judges(register):
    register("echo-judge", make_judge, "test judge")

@hookimpl
def register_stages(register):
    register("echo", EchoStage)
    register("record", EchoStage)  # taken by a built-in: refused
'''


def test_backends_judges_and_stages_register_through_hooks(tmp_path, monkeypatch, fresh_registry):
    folder = _plugin_dir(tmp_path, {"kinds.py": KINDS_PLUGIN})
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(folder))
    reg = fresh_registry()
    assert reg.backend("echo-backend").obj(x=1) == ("backend", {"x": 1})
    assert reg.backend("echo-backend").plugin == "kinds"
    assert reg.judge("echo-judge").description == "test judge"
    assert reg.stage("echo").description == "Writes nothing; proves stage registration."
    assert reg.stage("record").plugin == "awctl"
    info = next(p for p in reg.plugins if p.name == "kinds")
    assert any("stage 'record' is already registered by plugin 'awctl'" in e for e in info.errors)
    from awctl.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as err:
        reg.backend("nope")
    assert "echo-backend" in err.value.hint
