"""The Qwen web-agent tool layout: codec round trips, Qwen-shaped actions, the real env's qwen layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.search.codec import (
    ErrorReply,
    QueryBlock,
    SearchAction,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResult,
    SearchResults,
    VisitReport,
)
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.tasks import PY, extract, search
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError, ConfigError

A = SearchActionCodec()
OBS = SearchObservationCodec()
AWB = Path(__file__).parents[3] / "tests" / "fixtures" / "awb" / "search_test.jsonl"

# Outputs laid out exactly as the Qwen agents' search/visit tools write them (hand-made content).
TOOL_SEARCH = (
    "A Google search for 'kyiv population' found 3 results:\n\n## Web Results\n"
    "1. [Kyiv - Wikipedia](https://en.wikipedia.org/wiki/Kyiv)\nDate published: Mar 3, 2024\n"
    "Source: Wikipedia\n\nKyiv is the capital and most populous city of Ukraine.\n\n"
    "2. [Kyiv (Kiev), Ukraine (1950-2025)](https://example.org/pop_(city))\n\nPopulation by year.\n\n"
    "3. [[PDF] Census report](https://example.org/census.pdf)\n"
)
TOOL_MULTI = (
    TOOL_SEARCH
    + "\n=======\nNo results found for 'qqq zzz'. Try with a more general query."
    + "\n=======\nGoogle search Timeout, return None, Please try again later."
    + "\n=======\nA Tavily search for 'kyiv area' found 1 results:\n\n## Web Results\n"
    "1. [Area](https://example.org/area)\nDate published: 2024-05-01T10:00:00Z\n\n839 km2."
)
TOOL_VISIT = (
    "The useful information in https://example.org/a for user goal find the area as follows: \n\n"
    "Evidence in page: \nThe city covers 839 km2.\n\nIt lies on the Dnipro.\n\n"
    "Summary: \nThe area is 839 km2."
)
TOOL_VISIT_MULTI = (
    TOOL_VISIT + "\n\n\n=======\nError fetching https://example.org/b: read timed out\n=======\n"
    "The useful information in https://example.org/c for user goal find the area as follows: \n\n"
    "Evidence in page: \nThe provided webpage content could not be accessed. Please check the URL or file "
    "format.\n\nSummary: \nThe webpage content could not be processed, and therefore, no information is "
    "available."
)
# A tool version prefixes the no-results text with its exception's message.
TOOL_NO_RESULTS_CHAINED = (
    "No results found for query: 'a b'. Use a less specific query.No results found for 'a b'. Try with a more "
    "general query.\n=======\nNo results found for 'c'. Try with a more general query, or remove the year filter."
)
TOOL_ERRORS = [
    "Google search Timeout, return None, Please try again later.",
    "[Search] Invalid request format: Input must be a JSON object containing 'query' field",
    "[Visit] Invalid request format: Input must be a JSON object containing 'url' and 'goal' fields",
    "[visit] Failed to read page",
]


def _awb_observations() -> list[str]:
    rows = [json.loads(line) for line in AWB.read_text(encoding="utf-8").splitlines()]
    return [r.split("\n", 1)[1] for row in rows for r in row["response"]]


@pytest.mark.parametrize(
    "text", [TOOL_SEARCH, TOOL_MULTI, TOOL_VISIT, TOOL_VISIT_MULTI, *_awb_observations()]
)
def test_qwen_layout_texts_parse_and_render_back_byte_for_byte(text: str) -> None:
    parsed = OBS.parse(text)
    assert isinstance(parsed, (SearchResults, VisitReport))
    assert OBS.render(parsed) == text


def test_search_parse_reads_every_field_and_block_kind() -> None:
    obs = OBS.parse(TOOL_MULTI)
    assert isinstance(obs, SearchResults) and obs.layout == "qwen"
    assert [b.query for b in obs.blocks] == ["kyiv population", "qqq zzz", None, "kyiv area"]
    first = obs.blocks[0]
    assert first.declared == 3 and first.numbers == (1, 2, 3)
    assert first.results[0] == SearchResult(
        "https://en.wikipedia.org/wiki/Kyiv",
        "Kyiv - Wikipedia",
        "Kyiv is the capital and most populous city of Ukraine.",
        "Mar 3, 2024",
        "Wikipedia",
        2,
    )
    assert first.results[1].url == "https://example.org/pop_(city)" and first.results[1].date is None
    assert first.results[2].title == "[PDF] Census report" and first.results[2].snippet == ""
    assert obs.blocks[1].notice and obs.blocks[1].results == () and obs.blocks[3].engine == "Tavily"


def test_no_results_texts_name_their_query() -> None:
    obs = OBS.parse(TOOL_NO_RESULTS_CHAINED)
    assert [(b.query, b.results) for b in obs.blocks] == [("a b", ()), ("c", ())]


def test_visit_parse_reads_pages_notices_and_multi_paragraph_evidence() -> None:
    obs = OBS.parse(TOOL_VISIT_MULTI)
    assert isinstance(obs, VisitReport)
    assert [p.url for p in obs.pages] == [
        "https://example.org/a",
        "https://example.org/b",
        "https://example.org/c",
    ]
    assert obs.pages[0].evidence == "The city covers 839 km2.\n\nIt lies on the Dnipro."
    assert obs.pages[0].summary == "The area is 839 km2." and obs.pages[0].goal == "find the area"
    assert obs.pages[1].notice == "Error fetching https://example.org/b: read timed out"


@pytest.mark.parametrize("text", TOOL_ERRORS)
def test_the_tools_failure_texts_are_verbatim_errors(text: str) -> None:
    parsed = OBS.parse(text)
    assert parsed == ErrorReply(text, verbatim=True) and OBS.render(parsed) == text


def test_normalize_ignores_the_layouts_optional_spacing() -> None:
    spaced = OBS.parse(TOOL_SEARCH)
    tight = "A Google search for 'x' found 1 results:\n\n## Web Results\n1. [T](https://a.org/)\nsnippet"
    loose = (
        "A Google search for 'x' found 1 results:\n\n## Web Results\n1. [T](https://a.org/)\n\nsnippet  \n"
    )
    assert OBS.normalize(tight) == OBS.normalize(loose) != OBS.normalize(tight.replace("snippet", "other"))
    same_line = (
        TOOL_VISIT.replace("follows: \n", "follows:\n")
        .replace("page: \n", "page: ")
        .replace("Summary: \n", "Summary: ")
    )
    assert same_line != TOOL_VISIT and OBS.normalize(same_line) == OBS.normalize(TOOL_VISIT)
    assert OBS.render(spaced) == TOOL_SEARCH  # normalising never changes what parse recorded


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("A Google search for 'x' found 1 results:\n\n1. [T](https://a.org/)", "observation line 1"),
        ("A Google search for 'x' found 1 results:\n\n## Web Results\nT https://a.org/", "observation line 4"),
        (TOOL_SEARCH + "\n=======\nA Google search for 'y' found 0 results:\n## Web Results\n", "observation line 17"),
        ("The useful information in https://a.org/ for user goal g as follows: \n\nNo evidence", "observation line 3"),
        ("The useful information in https://a.org/ for user goal g as follows: \n\nEvidence in page: \nx", "observation line 3"),
        ("The useful information about https://a.org/", "observation line 1"),
    ],
)  # fmt: skip
def test_broken_qwen_texts_name_the_line(text: str, where: str) -> None:
    with pytest.raises(CodecError) as info:
        OBS.parse(text)
    assert info.value.where == where


_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="[]()\n\r"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() == s and not s.startswith(("Date published", "Source")))


@given(
    st.lists(
        st.tuples(_LINE, _LINE, st.none() | _LINE, st.none() | _LINE, st.sampled_from([0, 1, 2])),
        max_size=4,
    ),
    _LINE.filter(lambda q: "'" not in q),
)
def test_any_qwen_search_block_round_trips(items: list[tuple], query: str) -> None:
    results = tuple(
        SearchResult(f"https://a.org/{i}", title, snippet if gap else "", date, source, gap)
        for i, (title, snippet, date, source, gap) in enumerate(items)
    )
    obs = SearchResults((QueryBlock(query, results, declared=len(results)),), layout="qwen")
    text = OBS.render(obs)
    assert OBS.render(OBS.parse(text)) == text
    reparsed = OBS.parse(text).blocks[0]
    assert [(r.title, r.url, r.snippet, r.date, r.source) for r in reparsed.results] == [
        (r.title, r.url, r.snippet, r.date, r.source) for r in results
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<tool_call>\n{"name": "search", "arguments": {"query": ["a b", "c"]}}\n</tool_call>',
         SearchAction("web_search", {"queries": ["a b", "c"]})),
        ('{"name": "search", "arguments": {"query": "a b"}}', SearchAction("web_search", {"queries": ["a b"]})),
        ('{"name": "visit", "arguments": {"url": "https://a.org/", "goal": "g"}}',
         SearchAction("web_extractor", {"url": "https://a.org/", "goal": "g"})),
        ('{"name": "visit", "arguments": {"url": ["https://a.org/", " https://b.org/ "], "goal": "g"}}',
         SearchAction("web_extractor", {"url": ["https://a.org/", "https://b.org/"], "goal": "g"})),
        ('{"name": "visit", "arguments": "{\\"url\\": [\\"https://a.org/\\"], \\"goal\\": \\"g\\"}"}',
         SearchAction("web_extractor", {"url": "https://a.org/", "goal": "g"})),
    ],
)  # fmt: skip
def test_qwen_agent_calls_map_to_canonical_actions(text: str, expected: SearchAction) -> None:
    action = A.parse(text)
    assert action == expected
    assert A.parse(A.render(action)) == action


@pytest.mark.parametrize(
    ("args", "where"),
    [
        ({"url": [], "goal": "g"}, "action.arguments.url"),
        ({"url": ["https://a.org/", 3], "goal": "g"}, "action.arguments.url[1]"),
        ({"url": [f"https://a.org/{i}" for i in range(11)]}, "action.arguments.url"),
    ],
)
def test_bad_url_lists_are_rejected_naming_the_field(args: dict, where: str) -> None:
    with pytest.raises(CodecError) as info:
        A.parse(json.dumps({"name": "visit", "arguments": args}))
    assert info.value.where == where


def _visit(urls: list[str] | str, goal: str | None = None) -> str:
    args: dict = {"url": urls}
    if goal is not None:
        args["goal"] = goal
    return json.dumps({"name": "visit", "arguments": args})


def test_real_env_in_the_qwen_layout_answers_like_the_qwen_tools() -> None:
    env = SearchDomain().real_env({"layout": "qwen"})
    assert isinstance(env, SearchEnv) and env.layout == "qwen"
    env.reset()
    found = env.step(search("assert statement", "qqqzzz")).observation
    assert found.startswith("A Google search for 'assert statement' found 5 results:\n\n## Web Results\n1. [")
    assert found.endswith("\n=======\nNo results found for 'qqqzzz'. Try with a more general query.")
    assert "\nDate published: 2026-05-09\n\n" in found
    page = env.step(_visit(f"{PY}/topics/assert", "AssertionError")).observation
    assert page.startswith(
        f"The useful information in {PY}/topics/assert for user goal AssertionError as follows: "
    )
    assert "AssertionError" in OBS.parse(page).pages[0].evidence
    both = env.step(_visit([f"{PY}/topics/assert", "https://example.org/gone"], "AssertionError")).observation
    parsed = OBS.parse(both)
    assert [p.url for p in parsed.pages] == [f"{PY}/topics/assert", "https://example.org/gone"]
    assert parsed.pages[1].evidence.startswith("The provided webpage content could not be accessed.")
    assert "\n\n\n=======\n" in both and not both.endswith("\n")
    assert env.step(extract(f"{PY}/topics/assert")).observation.startswith("[Visit] Invalid request format")
    for text in (found, page, both):
        assert OBS.render(OBS.parse(text)) == text


def test_awctl_layout_reads_one_url_per_call_and_layouts_are_validated() -> None:
    env = SearchEnv()
    env.reset()
    out = env.step(_visit([f"{PY}/topics/assert", f"{PY}/topics/pass"], "g")).observation
    assert out == "Error: web_extractor reads one URL per call in this layout, got 2"
    with pytest.raises(ConfigError, match="unknown layout 'google'"):
        SearchEnv(layout="google")


def test_layouts_share_the_engine_results() -> None:
    awctl, qwen = SearchEnv(), SearchEnv(layout="qwen")
    a = OBS.parse(awctl.step(search("zlib crc32")).observation)
    q = OBS.parse(qwen.step(search("zlib crc32")).observation)
    strip = [(r.url, r.title, r.snippet, r.date) for r in a.blocks[0].results]
    assert strip == [(r.url, r.title, r.snippet, r.date) for r in q.blocks[0].results]


def test_a_qwen_layout_recording_tells_the_simulator_that_layout() -> None:
    from awctl_domains.search.env import READY_QWEN
    from awctl_domains.search.tasks import tasks_for

    domain = SearchDomain()
    task = tasks_for("facts")[0]
    qwen = domain.record(task, env=SearchEnv(layout="qwen"))
    awctl = domain.record(task)
    assert qwen.system.initial_state == READY_QWEN and qwen.metadata["layout"] == "qwen"
    assert "A Google search for '<query>'" in qwen.system.simulation_instruction
    assert "Query <i>: <query>" in awctl.system.simulation_instruction
    assert "A Google search for" not in awctl.system.simulation_instruction
    prompts = {domain.system_prompt(qwen.system, v) for v in range(domain.prompt_variants)}
    assert len(prompts) == 10 and all("The useful information in <url>" in p for p in prompts)
