"""The real search environment and its shipped corpus: determinism, ranking, extraction, memory."""

from __future__ import annotations

import json
import platform

import pytest
from awctl_domains.search import build_corpus
from awctl_domains.search.codec import SearchObservationCodec
from awctl_domains.search.engine import CORPUS_FILE, DEFAULT_TOP_K, SearchEngine, default_engine, words
from awctl_domains.search.env import READY, SearchEnv
from awctl_domains.search.tasks import PY, extract, memory, search

from awctl.domain import Task

OBS = SearchObservationCodec()
QUERIES = ["assert statement", "json dumps indent", "pluggy hook", "walrus operator", "sqlite3 connect",
           "compression library", "heap queue", "random UUID", "truth value", "plugin"]  # fmt: skip


def test_corpus_file_is_small_consistent_and_matches_its_manifest() -> None:
    manifest = json.loads((CORPUS_FILE.parent / "manifest.json").read_text())
    pages = [json.loads(line) for line in CORPUS_FILE.read_text(encoding="utf-8").splitlines()]
    assert CORPUS_FILE.stat().st_size < 3_000_000
    assert len(pages) == manifest["pages"] > 200
    assert [p["url"] for p in pages] == sorted({p["url"] for p in pages})
    assert all(len(p["text"]) <= manifest["max_page_chars"] for p in pages)
    assert all("\n" not in p["title"] and p["title"] for p in pages)
    assert {p["date"] for p in pages} == {manifest["date"]}


@pytest.mark.skipif(
    platform.python_version() != json.loads((CORPUS_FILE.parent / "manifest.json").read_text())["python"],
    reason="the committed corpus was built by another Python version",
)
@pytest.mark.not_a_component("needs the Python version the corpus was built with")
def test_rebuilding_the_reference_topics_reproduces_the_committed_pages() -> None:
    manifest = json.loads((CORPUS_FILE.parent / "manifest.json").read_text())
    version = ".".join(platform.python_version().split(".")[:2])
    rebuilt = list(build_corpus.topic_pages(version, manifest["date"]))
    committed = {p["url"]: p for p in map(json.loads, CORPUS_FILE.read_text(encoding="utf-8").splitlines())}
    assert rebuilt and all(committed[p["url"]] == p for p in rebuilt)


def test_split_parts_keeps_paragraphs_whole_and_bounded() -> None:
    body = "\n\n".join(f"para {i} " + "x" * 70 for i in range(40))
    parts = build_corpus._split_parts(body, 400)
    assert all(len(p) <= 400 for p in parts)
    assert "\n\n".join(parts) == body


def test_same_actions_give_identical_observations_across_sessions() -> None:
    actions = [search(*QUERIES[:3]), extract(f"{PY}/topics/assert"), memory("set", "a", "1"), memory("list")]

    def run() -> list[str]:
        env = SearchEnv(engine=SearchEngine.from_file(CORPUS_FILE))
        assert env.reset() == READY
        return [env.step(a).observation for a in actions]

    assert run() == run()


def test_search_ranks_the_obvious_page_first_and_respects_top_k() -> None:
    engine = default_engine()
    assert engine.search("assert statement")[0].url == f"{PY}/topics/assert"
    assert engine.search("sqlite3 connect")[0].url == f"{PY}/library/sqlite3.html"
    assert len(engine.search("the", 3)) == 3
    assert engine.search("!!! ???") == []
    env = SearchEnv()
    env.reset(Task("t", "search", "s", "", [], lambda e: None, setup={"top_k": 2}))  # type: ignore[arg-type]
    parsed = OBS.parse(env.step(search("statement")).observation)
    assert len(parsed.blocks[0].results) == 2
    env.reset()
    assert len(OBS.parse(env.step(search("statement")).observation).blocks[0].results) == DEFAULT_TOP_K


def test_every_snippet_word_occurs_in_the_extracted_page() -> None:
    env = SearchEnv()
    env.reset()
    checked = 0
    for query in QUERIES:
        for r in OBS.parse(env.step(search(query)).observation).blocks[0].results:
            page = OBS.parse(env.step(extract(r.url)).observation)
            assert page.title == r.title and page.date == r.date
            assert set(words(r.snippet)) <= set(words(page.body)), (query, r.url)
            checked += 1
    assert checked >= 40


def test_extractor_returns_markdown_page_goal_passages_and_404() -> None:
    env = SearchEnv()
    env.reset()
    page = OBS.parse(env.step(extract(f"{PY}/topics/assert#anchor")).observation)
    assert page.url == f"{PY}/topics/assert" and page.body.startswith('# The "assert" statement')
    focused = OBS.parse(env.step(extract(f"{PY}/topics/assert", goal="AssertionError")).observation)
    assert focused.goal == "AssertionError" and "AssertionError" in focused.body
    assert len(focused.body) < len(page.body)
    none = env.step(extract(f"{PY}/topics/assert", goal="zebra")).observation
    assert none.endswith("No passage of this page matches the goal.")
    assert (
        env.step(extract("https://example.org/x")).observation
        == "Error: 404 Not Found: https://example.org/x"
    )


def test_memory_is_a_per_episode_key_value_store_with_exact_replies() -> None:
    env = SearchEnv()
    env.reset()
    replies = [
        env.step(a).observation
        for a in (
            memory("get", "a"),
            memory("set", "a", "1"),
            memory("set", "a", "two\nlines"),
            memory("set", "b", "x"),
            memory("get", "a"),
            memory("list"),
            memory("delete", "b"),
            memory("delete", "b"),
        )
    ]
    assert replies == [
        'Memory: no key "a".',
        'Memory: stored "a".',
        'Memory: updated "a".',
        'Memory: stored "b".',
        'Memory: value of "a":\ntwo\nlines',
        'Memory: 2 keys: "a", "b".',
        'Memory: deleted "b".',
        'Memory: no key "b".',
    ]
    env.reset()
    assert env.step(memory("list")).observation == "Memory: 0 keys."


def test_invalid_action_gets_an_error_observation_naming_the_problem() -> None:
    out = SearchEnv().step('{"name": "web_search", "arguments": {"queries": []}}')
    assert out.observation.startswith("Error: invalid action: action.arguments.queries: needs at least one")
    assert not out.done


def test_missing_or_bad_corpus_raises_a_clear_error(tmp_path) -> None:
    from awctl.errors import EnvironmentUnavailable, InputError

    with pytest.raises(EnvironmentUnavailable, match="search corpus missing"):
        SearchEngine.from_file(tmp_path / "none.jsonl")
    bad = tmp_path / "pages.jsonl"
    bad.write_text(CORPUS_FILE.read_text(encoding="utf-8").splitlines()[0] + '\n{"url": "x"}\n')
    with pytest.raises(InputError, match=r"pages.jsonl:2: not a corpus page"):
        SearchEngine.from_file(bad)
