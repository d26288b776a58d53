"""Output parsing: reasoning stripping, last-block extraction, diagnostics (awctl.sim.parse)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from awctl.sim.parse import parse_output, strip_reasoning

OBS = "<predicted_observation>"
END = "</predicted_observation>"


def test_well_formed_output_gives_observation_and_reasoning():
    p = parse_output(f"<think>\nls lists files\n</think>\n\n{OBS}\nfile.txt\n{END}")
    assert p.observation == "file.txt"
    assert p.reasoning == "ls lists files"
    d = p.diagnostics
    assert (d["think_open"], d["think_close"], d["obs_open"], d["obs_close"]) == (1, 1, 1, 1)
    assert d["tagged"] and not d["empty"] and not d["unclosed_think"] and not d["speculative"]
    assert d["observation_chars"] == len("file.txt")


def test_last_observation_block_wins():
    p = parse_output(f"{OBS}draft{END} then {OBS}\nfinal\n{END}")
    assert p.observation == "final"


def test_unclosed_think_runs_until_the_observation_tag():
    p = parse_output(f"<think>planning and more{OBS}\nout\n{END}")
    assert p.observation == "out"
    assert p.reasoning == "planning and more"
    assert p.diagnostics["unclosed_think"]


def test_unclosed_think_without_answer_gives_empty_observation():
    p = parse_output("<think>I never finish thinking")
    assert p.observation == ""
    assert p.reasoning == "I never finish thinking"
    assert p.diagnostics["empty"]


def test_close_tag_only_means_template_opened_think():
    p = parse_output(f"reasoning from the template\n</think>\n{OBS}\nx\n{END}")
    assert p.reasoning == "reasoning from the template"
    assert p.observation == "x"


def test_think_inside_is_not_mistaken_for_observation_and_inner_spacing_is_kept():
    p = parse_output(f"<think>maybe {OBS}fake{END}</think>{OBS}\n  a\n    b\n{END}")
    assert p.observation == "  a\n    b"


def test_unclosed_observation_runs_to_end():
    p = parse_output(f"{OBS}\npartial output")
    assert p.observation == "partial output"
    assert p.diagnostics["unclosed_observation"]


def test_untagged_output_falls_back_to_whole_text_and_says_so():
    p = parse_output("  plain text  ")
    assert p.observation == "plain text"
    assert p.diagnostics["tagged"] is False


def test_trailing_text_is_counted():
    p = parse_output(f"{OBS}x{END}\nextra words")
    assert p.diagnostics["trailing_chars"] == len("extra words")


def test_speculative_wording_flagged():
    p = parse_output(f"{OBS}The output would likely be a list of files.{END}")
    assert p.diagnostics["speculative"]
    assert p.diagnostics["speculative_phrases"]
    assert not parse_output(f"{OBS}total 4\n-rw-r--r-- 1 root root 0 a.txt{END}").diagnostics["speculative"]


def test_backend_reasoning_is_kept_first():
    body, reasoning = strip_reasoning("<think>b</think>answer", reasoning="a")
    assert body == "answer"
    assert reasoning == "a\n\nb"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<think>", "</think>", OBS, END, "x", "\n", "would be", " "]), max_size=30))
def test_parse_is_total_and_never_returns_tags(parts):
    text = "".join(parts)
    p = parse_output(text)
    assert "<think>" not in p.observation and "</think>" not in p.observation
    assert OBS not in p.observation and END not in p.observation
    assert p.diagnostics["output_chars"] == len(text)
