"""The AgentWorldBench layout (web_search, web_extractor, dict_memory): read and written byte for byte,
malformed texts named by line, the tools' calls parsed."""

from __future__ import annotations

import json

import pytest
from awctl_domains.search.codec import (
    DictMemoryReply,
    ExtractedPages,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResults,
)

from awctl.errors import CodecError

OBS, ACT = SearchObservationCodec(), SearchActionCodec()

SEARCH = (
    """Search results for "python 3.12 release date":

[1] https://docs.python.org/3/whatsnew/3.12.html
Title: What's New In Python 3.12 — Python 3.13 documentation
Snippet: …Python 3.12 was released on October 2, 2023
Published: 2023-10-02

[2] https://peps.python.org/pep-0693/
Title: PEP 693 – Python 3.12 Release Schedule
Snippet: """  # an engine result without a snippet
    + """

Search results for "nothing "quoted" here":

No results found."""
)

PAGES = """## Page 1: https://en.wikipedia.org/wiki/Git
Goal: who created Git

# Git

It was originally created by Linus Torvalds in April 2005.

## History

## Page 9: not a page split, a heading of the page

## Page 2: https://example.org/gone
Goal: who created Git

Error: 404 Not Found"""


@pytest.mark.parametrize(
    "text",
    [
        SEARCH,
        PAGES,
        "## Page 1: https://example.org/a\n\n# Only a title",
        '{"status": "ok", "action": "set", "key": "k", "previous": null}',
        '{"status":"ok","action":"list","keys":["a","b"]}',
        json.dumps({"status": "ok", "action": "get", "key": "ä", "value": {"x": [1, 2]}}, indent=2),
        json.dumps({"status": "ok", "action": "get", "key": "ä", "value": "ö"}, ensure_ascii=True),
        json.dumps({"status": "error", "action": "delete", "key": "k", "error": "key not found", "size": 0}),
    ],
)
def test_awb_texts_render_back_byte_for_byte(text: str) -> None:
    assert OBS.render(OBS.parse(text)) == text


def test_search_blocks_keep_numbers_dates_and_empty_blocks() -> None:
    obs = OBS.parse(SEARCH)
    assert isinstance(obs, SearchResults) and obs.layout == "awb"
    first, second = obs.blocks
    assert first.query == "python 3.12 release date" and first.numbers == (1, 2) and first.declared is None
    assert [r.date for r in first.results] == ["2023-10-02", None] and first.results[1].snippet == ""
    assert second.query == 'nothing "quoted" here' and second.results == ()


def test_pages_split_only_at_the_next_page_number() -> None:
    obs = OBS.parse(PAGES)
    assert isinstance(obs, ExtractedPages) and [p.url for p in obs.pages] == [
        "https://en.wikipedia.org/wiki/Git",
        "https://example.org/gone",
    ]
    git, gone = obs.pages
    assert git.title == "Git" and git.goal == "who created Git" and "## Page 9:" in git.body
    assert gone.error == "404 Not Found" and gone.title is None


def test_memory_replies_keep_their_json_style() -> None:
    text = json.dumps({"status": "ok", "action": "get", "key": "k", "value": [1]}, indent=4)
    reply = OBS.parse(text)
    assert isinstance(reply, DictMemoryReply) and reply.indent == 4 and reply.payload["value"] == [1]
    assert OBS.normalize(text) == '{"status": "ok", "action": "get", "key": "k", "value": [1]}'


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ('Search results for "q":\n[1] https://a.org\nTitle: t\nSnippet: s', "line 2", "blank line"),
        ('Search results for "q":\n\n[1] https://a.org\nSnippet: s', "line 4", "'Title: '"),
        ('Search results for "q":\n\n1. https://a.org\nTitle: t\nSnippet: s', "line 3", "'[<n>] <url>'"),
        (
            'Search results for "q":\n\n[1] https://a.org\nTitle: t\nSnippet: s\nDate: x',
            "line 6",
            "unexpected",
        ),
        ("## Page 1: https://a.org\nText without a title", "line 2", "blank line"),
        ("## Page 1: https://a.org\n\nplain text", "line 3", "'# <title>'"),
        ("## Page 1: https://a.org\n\n# T\nno blank line", "line 4", "blank line after the page title"),
        ("## Page 2: https://a.org\n\n# T", "line 1", "'## Page 1: <url>'"),
        ('{"status": "ok", "action": "get"}', "line 1", "lacks ['key', 'value']"),
        ('{"status": "done", "action": "get", "key": "k"}', "line 1", '"status" ok|error'),
        ('{"status": "ok",  "action": "list", "keys": []}', "line 1", "json.dumps"),
        ('{"status": "ok", "action": "list", "keys": [1]}', "line 1", "list of strings"),
        ("{not json", "line 1", "not JSON"),
    ],
)
def test_malformed_awb_texts_name_the_line(text: str, where: str, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        OBS.parse(text)
    assert info.value.where == f"observation {where}" and fragment in info.value.message


def test_awb_calls_parse_to_canonical_actions() -> None:
    extract = ACT.parse('{"name": "web_extractor", "arguments": {"urls": ["https://a.org"], "goal": ""}}')
    assert extract.arguments == {"url": "https://a.org"}
    two = ACT.parse(
        '{"name": "web_extractor", "arguments": {"urls": ["https://a.org", "https://b.org"], "goal": "g"}}'
    )
    assert two.arguments == {"url": ["https://a.org", "https://b.org"], "goal": "g"}
    mem = ACT.parse('{"name": "dict_memory", "arguments": {"op": "store", "key": "k", "value": {"a": [1]}}}')
    assert mem.name == "dict_memory" and mem.arguments == {"action": "set", "key": "k", "value": {"a": [1]}}
    assert ACT.parse('{"name": "dict_memory", "arguments": {"action": "keys"}}').arguments == {
        "action": "list"
    }
    for bad, where in (
        ('{"name": "web_extractor", "arguments": {"url": "a", "urls": ["b"]}}', "action.arguments"),
        ('{"name": "dict_memory", "arguments": {"action": "pop", "key": "k"}}', "action.arguments.action"),
        (
            '{"name": "dict_memory", "arguments": {"action": "get", "key": "k", "value": 1}}',
            "action.arguments.value",
        ),
        ('{"name": "dict_memory", "arguments": {"action": "set", "key": "k"}}', "action.arguments.value"),
    ):
        with pytest.raises(CodecError) as info:
            ACT.parse(bad)
        assert info.value.where == where


def test_each_layout_declares_its_own_tool_list() -> None:
    assert '"name": "dict_memory"' in ACT.schema_for("awb") and '"urls"' in ACT.schema_for("awb")
    assert '"name": "visit"' in ACT.schema_for("qwen") and '"name": "memory"' in ACT.schema_for("awctl")
