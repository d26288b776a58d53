"""Action and observation codecs of the search domain: canonical form, accepted variants, exact layouts."""

from __future__ import annotations

import json

import pytest
from awctl_domains.search.codec import (
    ErrorReply,
    MemoryReply,
    PageExtract,
    SearchAction,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResults,
)
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.tasks import PY, extract, memory, search
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError

A = SearchActionCodec()
OBS = SearchObservationCodec()


@pytest.mark.parametrize(
    "action",
    [
        SearchAction("web_search", {"queries": ["assert statement", "zlib crc32"]}),
        SearchAction("web_extractor", {"url": f"{PY}/topics/assert"}),
        SearchAction("web_extractor", {"url": f"{PY}/topics/assert", "goal": "exception"}),
        SearchAction("memory", {"op": "set", "key": "k", "value": "multi\nline"}),
        SearchAction("memory", {"op": "get", "key": "k"}),
        SearchAction("memory", {"op": "delete", "key": "k"}),
        SearchAction("memory", {"op": "list"}),
    ],
)
def test_parse_of_render_is_identity(action: SearchAction) -> None:
    text = A.render(action)
    assert A.parse(text) == action
    assert A.family(text) == action.name
    assert text.startswith('{"name": ')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"name": "search", "arguments": {"query": "a b"}}',
            SearchAction("web_search", {"queries": ["a b"]}),
        ),
        (
            '{"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{\\"queries\\": [\\"x\\"]}"}}',
            SearchAction("web_search", {"queries": ["x"]}),
        ),
        (
            '<tool_call>\n{"name": "visit", "arguments": {"url": ["https://a.org/p"], "goal": "g"}}\n</tool_call>',
            SearchAction("web_extractor", {"url": "https://a.org/p", "goal": "g"}),
        ),
        (
            '{"tool": "fetch", "args": {"url": "https://a.org/"}}',
            SearchAction("web_extractor", {"url": "https://a.org/"}),
        ),
        (
            '{"name": "memory", "parameters": {"op": "store", "key": "n", "value": 42}}',
            SearchAction("memory", {"op": "set", "key": "n", "value": "42"}),
        ),
        ('{"name": "memory", "input": {"op": "keys"}}', SearchAction("memory", {"op": "list"})),
        (
            '```json\n{"name": "memory", "arguments": {"op": "recall", "key": "n"}}\n```',
            SearchAction("memory", {"op": "get", "key": "n"}),
        ),
    ],
)
def test_common_alternative_shapes_parse_to_the_canonical_action(text: str, expected: SearchAction) -> None:
    assert A.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ("web_search(x)", "action", "not JSON"),
        ('["web_search"]', "action", "JSON object"),
        ('{"arguments": {}}', "action", "tool name"),
        ('{"name": "shell", "arguments": {}}', "action.name", "unknown tool"),
        ('{"name": "web_search", "arguments": {}}', "action.arguments", "queries"),
        ('{"name": "web_search", "arguments": {"queries": []}}', "action.arguments.queries", "at least one"),
        (
            '{"name": "web_search", "arguments": {"queries": ["a","b","c","d","e","f"]}}',
            "action.arguments.queries",
            "at most",
        ),
        (
            '{"name": "web_search", "arguments": {"queries": ["ok", " "]}}',
            "action.arguments.queries[1]",
            "non-empty",
        ),
        ('{"name": "web_search", "arguments": {"queries": ["a"], "k": 3}}', "action.arguments", "unexpected"),
        ('{"name": "web_extractor", "arguments": {"url": 3}}', "action.arguments.url", "URL"),
        (
            '{"name": "memory", "arguments": {"op": "push", "key": "a"}}',
            "action.arguments.op",
            "unknown memory op",
        ),
        (
            '{"name": "memory", "arguments": {"op": "set", "key": "a"}}',
            "action.arguments.value",
            "needs a value",
        ),
        ('{"name": "memory", "arguments": {"op": "get", "key": ""}}', "action.arguments.key", "key"),
        ('{"name": "memory", "arguments": "{bad"}', "action.arguments", "not JSON"),
    ],
)
def test_malformed_actions_say_what_is_wrong_and_where(text: str, where: str, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        A.parse(text)
    assert info.value.where == where
    assert fragment in info.value.message
    assert A.family(text) == "invalid"


def _real_observations() -> list[str]:
    env = SearchEnv()
    env.reset()
    actions = [
        search("assert statement", "qqqzzz nothing matches", "json dumps indent"),
        extract(f"{PY}/topics/assert"),
        extract(f"{PY}/library/heapq.html", goal="smallest element heappop"),
        extract("https://example.org/none"),
        memory("set", "k", "line one\nline two"),
        memory("set", "k", "v2"),
        memory("get", "k"),
        memory("get", "absent"),
        memory("set", 'quote"key', "x"),
        memory("list"),
        memory("delete", "k"),
        memory("delete", "k"),
        "not json",
    ]
    return [env.step(a).observation for a in actions]


def test_every_real_observation_parses_and_renders_back_exactly() -> None:
    kinds = set()
    for text in _real_observations():
        parsed = OBS.parse(text)
        kinds.add(type(parsed))
        assert OBS.render(parsed) == text
        assert OBS.normalize(text) == OBS.normalize(text + "  \n\n")
    assert kinds == {SearchResults, PageExtract, MemoryReply, ErrorReply}


def test_search_layout_numbers_restart_per_query_block() -> None:
    text = SearchEnv().step(search("assert statement", "zlib crc32")).observation
    blocks = text.split("\n\nQuery 2: ")
    assert blocks[0].startswith("Query 1: assert statement\nResults: 5\n\n[1] https://")
    assert "[5] " in blocks[0] and "[6] " not in text
    assert blocks[1].startswith("zlib crc32\nResults: 2\n\n[1] ")
    parsed = OBS.parse(text)
    assert [b.numbers for b in parsed.blocks] == [(1, 2, 3, 4, 5), (1, 2)]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("Query 1: a\nResults: 1\n\n[1] https://a.org/\nTitle: t\nDate: 2020-01-01", "observation line 6"),
        ("Query 1: a\n\n[1] https://a.org/", "observation line 2"),
        ("Query 1: a\nResults: 1\n[1] https://a.org/", "observation line 3"),
        ("URL: https://a.org/\nDate: 2020-01-01\n\nbody", "observation header"),
        ("URL: https://a.org/\nTitle: t\nDate: 2020-01-01\nAuthor: x\n\nbody", "observation line 4"),
        ("Memory: stored key.", "observation line 1"),
        ('Memory: 2 keys: "a".', "observation line 1"),
        ("Here are your results", "observation line 1"),
    ],
)
def test_malformed_observations_name_the_line(text: str, where: str) -> None:
    with pytest.raises(CodecError) as info:
        OBS.parse(text)
    assert info.value.where == where


@given(st.text(min_size=1).filter(lambda s: "\n" not in s and "\r" not in s and s == s.strip()), st.text())
def test_memory_replies_roundtrip_any_key_and_value(key: str, value: str) -> None:
    for reply in (
        MemoryReply("stored", key),
        MemoryReply("missing", key),
        MemoryReply("value", key, value.strip("\n")),
        MemoryReply("keys", keys=(key, key + "2")),
    ):
        assert OBS.parse(OBS.render(reply)) == reply


def test_canonical_action_json_is_what_tasks_write() -> None:
    assert json.loads(search("a"))["arguments"] == {"queries": ["a"]}
    assert A.render(A.parse(memory("list"))) == memory("list")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (  # a Qwen agent's call stays a search call with "query"
            '{"name": "search", "arguments": {"query": ["assert statement"]}}',
            '{"name": "web_search", "arguments": {"queries": ["assert statement"]}}',
        ),
        (  # AgentWorldBench's urls list stays a urls list
            '{"name": "web_extractor", "arguments": {"urls": ["https://a.org/p"], "goal": "g"}}',
            '{"name": "web_extractor", "arguments": {"url": "https://a.org/p", "goal": "g"}}',
        ),
        (
            '{\r"name": "memory", "arguments": {"op": "keys"}}\n',
            '{"name": "memory", "arguments": {"op": "list"}}',
        ),
        (
            '<tool_call>\n{"name": "visit", "arguments": {"url": "https://a.org/", "goal": "x"}}\n</tool_call>',
            '{"name": "web_extractor", "arguments": {"url": "https://a.org/", "goal": "x"}}',
        ),
    ],
)
def test_an_accepted_action_renders_back_as_written_and_canonical_gives_the_canonical_form(
    text: str, canonical: str
) -> None:
    assert A.render(A.parse(text)) == text
    assert A.canonical(text) == canonical
    assert A.parse(text) == A.parse(canonical)


def test_an_action_changed_in_code_renders_in_the_canonical_form() -> None:
    from dataclasses import replace

    parsed = A.parse('{"name": "search", "arguments": {"query": ["a"]}}')
    changed = replace(parsed, arguments={"queries": ["b"]})
    assert A.render(changed) == '{"name": "web_search", "arguments": {"queries": ["b"]}}'


@pytest.mark.parametrize(
    "text",
    [
        "Error: rate limited\n",
        "\nMemory: 0 keys.\n\n",
        "Query 1: a\nResults: 1\n\n[1] https://a.org/\nTitle: t   \nSnippet: s\nDate: 2020-01-01\n",
        '## Page 1: https://a.org/\n\n# A\n\nbody\n',
    ],
)
def test_an_accepted_observation_renders_back_byte_for_byte(text: str) -> None:
    parsed = OBS.parse(text)
    assert OBS.render(parsed) == text
    assert OBS.canonical(text) == OBS.render(OBS.parse(OBS.canonical(text)))  # the layout's own form
    assert OBS.canonical(text) != text and OBS.parse(OBS.canonical(text)) == parsed


_STARTS = ["Error: ", "Memory: ", 'Memory: value of "k":\n', "Query 1: ", "URL: ", "## Page 1: ", "{",
           "A Google search for '", "The useful information in ", 'Search results for "', "\n"]  # fmt: skip


@given(st.sampled_from(_STARTS), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_any_accepted_observation_text_round_trips(start: str, rest: str) -> None:
    text = start + rest
    try:
        parsed = OBS.parse(text)
    except CodecError:
        return
    assert OBS.render(parsed) == text
