"""Real environment, tasks, importer, prompts and registration of the calc domain."""

from __future__ import annotations

from pathlib import Path

import pytest
from awctl_example_domain import plugin
from awctl_example_domain.domain import CalcDomain
from awctl_example_domain.tasks import tasks_for

from awctl.errors import InputError
from awctl.trajectory import SystemPrompt

DOMAIN = CalcDomain()


@pytest.mark.parametrize("task", tasks_for("basic"), ids=lambda t: t.id)
def test_reference_solution_passes_its_checker_and_doing_nothing_fails_it(task, record) -> None:
    assert record(task).metadata["check"]["ok"]
    assert not record(task, []).metadata["check"]["ok"]


def test_reset_is_reproducible_and_its_banner_becomes_the_initial_state(record) -> None:
    task = tasks_for("basic")[1]
    banners = set()
    for seed in (0, 1, 2):
        with DOMAIN.real_env() as env:
            banners.add(env.reset(task, seed=seed))
    assert banners == {"calc ready; variables: h = 4.5, w = 3"}
    traj = record(task)
    assert traj.system.initial_state == "calc ready; variables: h = 4.5, w = 3"
    assert traj.source == "calc:basic" and "arithmetic" in traj.tags


def test_transcript_importer_reads_a_session_and_names_the_bad_line(tmp_path: Path) -> None:
    good = tmp_path / "s1.calc.txt"
    good.write_text("# saved by hand\ncalc ready; variables: w = 3\n> area = w * 2\narea = 6\n> area\n6\n")
    (importer,) = DOMAIN.importers()
    assert importer.matches(good)
    (traj,) = importer.load(good)
    assert traj.source == "calc-transcript:s1.calc.txt" and [t.action for t in traj.turns] == ["area = w * 2", "area"]
    from awctl.domain import run_verifiers

    assert all(r.ok for i in range(2) for r in run_verifiers(DOMAIN, traj, i))
    bad = tmp_path / "s2.calc.txt"
    bad.write_text("calc ready; variables: none\n2 + 2\n4\n")
    with pytest.raises(InputError, match=r"s2\.calc\.txt:2: expected a typed line"):
        list(importer.load(bad))


def test_prompt_builder_gives_ten_distinct_wordings_and_a_judge_guidance() -> None:
    sections = DOMAIN.sections_for(tasks_for("basic")[0], "calc ready; variables: none")
    prompts = {DOMAIN.system_prompt(sections, v) for v in range(DOMAIN.prompt_variants)}
    assert DOMAIN.prompt_variants == 10 and len(prompts) == 10
    assert all("calc ready; variables: none" in p for p in prompts)
    assert "calculator" in DOMAIN.judge_guidance
    assert isinstance(sections, SystemPrompt) and sections.action_space == DOMAIN.action_codec.schema()


def test_perturbations_render_with_defaults_and_overrides() -> None:
    forgotten = next(p for p in DOMAIN.perturbations() if p.name == "forgotten_variable")
    assert "variable x" in forgotten.render() and "variable w" in forgotten.render(name="w")


def test_plugin_hook_registers_one_calc_domain() -> None:
    registered: list = []
    plugin.register_domains(registered.append)
    assert [d.name for d in registered] == ["calc"] and isinstance(registered[0], CalcDomain)
