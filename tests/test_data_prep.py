"""End-to-end prep on a mixed input: unified JSONL with corrupt lines, gzip and zstd files, a domain
importer's raw logs, AgentWorldBench rows and every real domain's recorded fixtures. The toy domain is a
real loose plugin (tests/fixtures/prep/plugins) loaded through AWCTL_PLUGINS_DIR."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from awctl import plugins
from awctl.data.chat_tokens import ROLE_IDS
from awctl.data.masking import CATEGORY_IDS
from awctl.data.pipeline import PrepConfig, run_prep
from awctl.data.shards import load_shard, merge_outputs

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "prep"
spec = importlib.util.spec_from_file_location("prep_datagen", FIXTURES / "datagen.py")
datagen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(datagen)  # type: ignore[union-attr]


def _write_jsonl(path: Path, lines: list[str]) -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as handle:  # type: ignore[operator]
        handle.write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def registry():
    mp = pytest.MonkeyPatch()
    mp.setenv("AWCTL_PLUGINS_DIR", str(FIXTURES / "plugins"))
    reg = plugins.get_registry(refresh=True)
    assert "toyshell" in reg.domains, reg.problems
    yield reg
    mp.undo()
    plugins._REGISTRY = None


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, registry):
    """Input files plus ``expected``: (file name, line) -> check for every bad record we planted."""
    d = tmp_path_factory.mktemp("mixed")
    rows = datagen.make_rows(330, [f"src{k}" for k in range(30)], seed=1)
    good, gz_rows, zst_rows = rows[:240], rows[240:300], rows[300:330]
    lines = [json.dumps(r) for r in good]
    expected: dict[tuple[str, int], str] = {}

    def plant(text: str, check: str) -> None:
        lines.append(text)
        expected[("unified.jsonl", len(lines))] = check

    plant("{not json", "json")
    plant("[1, 2]", "json")
    plant(json.dumps({"id": "", "domain": "toyshell"}), "schema")
    bad = json.loads(json.dumps(good[0]))
    bad["id"], bad["turns"][0]["action"] = "bad-codec", "!! rerun"
    plant(json.dumps(bad), "codec:action")
    bad = json.loads(json.dumps(good[1]))
    bad["id"], bad["turns"] = "bad-verifier", [{"action": "echo hi", "observation": "bye"}]
    plant(json.dumps(bad), "verifier:echo_output")
    bad = json.loads(json.dumps(good[2]))
    bad["id"], bad["domain"] = "bad-domain", "nosuchdomain"
    plant(json.dumps(bad), "domain")
    dup = json.loads(json.dumps(good[3]))
    dup["id"] = "exact-copy"
    plant(json.dumps(dup), "dedupe:exact")
    near = json.loads(json.dumps(good[4]))
    near["id"] = "near-copy"
    near["turns"][1]["observation"] = near["turns"][1]["observation"].replace(" ", " zzz ", 1)
    plant(json.dumps(near), "dedupe:near")
    long = json.loads(json.dumps(good[5]))
    long["id"], long["turns"] = "too-long", long["turns"] * 3
    plant(json.dumps(long), "filter:turns")
    _write_jsonl(d / "unified.jsonl", lines)

    _write_jsonl(d / "more.jsonl.gz", [json.dumps(r) for r in gz_rows])
    import zstandard

    with open(d / "more.jsonl.zst", "wb") as raw, zstandard.ZstdCompressor().stream_writer(raw) as w:
        w.write(("\n".join(json.dumps(r) for r in zst_rows) + "\n").encode())
    trunc_rows = datagen.make_rows(40, ["trunc"], seed=99)
    data = gzip.compress(("\n".join(json.dumps(r) for r in trunc_rows) + "\n").encode())
    (d / "truncated.jsonl.gz").write_bytes(data[: len(data) // 2])
    expected_truncated = "read"

    (d / "session.toylog").write_text("$ uname -a\nToyOS 1.0 toy\n$ echo hi\nhi\n$ pwd\n/home/toy\n")
    (d / "broken.toylog").write_text("stray output\n$ ls\n")
    expected[("broken.toylog", 1)] = "importer:toylog"

    real = [
        REPO / "tests/fixtures/eval",
        REPO / "domains/terminal/tests/fixtures/session.cast",
        REPO / "domains/swe/fixtures/sweagent",
        REPO / "domains/search/tests/fixtures/agent_logs.search-chat.jsonl",
        REPO / "domains/mcp/tests/fixtures/chat_logs.openai.jsonl",
    ]
    awb = REPO / "tests/fixtures/awb"
    if importlib.util.find_spec("awctl.formats.agentworldbench") is not None:
        real += [
            awb / f"{name}_test.jsonl" for name in registry.domains if (awb / f"{name}_test.jsonl").exists()
        ]
    real = [p for p in real if p.exists()]
    return {
        "dir": d,
        "inputs": [d, *real],
        "expected": expected,
        "truncated": expected_truncated,
        "good": {r["id"] for r in rows},
        "real": real,
    }


@pytest.fixture(scope="module")
def prepped(mixed, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    config = PrepConfig(
        inputs=[str(p) for p in mixed["inputs"]],
        out=str(out),
        tokenizer="train:1024",
        block_size=512,
        split="train=0.8,val=0.1,test=0.1",
        seed=3,
        max_turns=12,
    )
    manifest = run_prep(config, plugins.get_registry().domains)
    return out, manifest, config


def _quarantine(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "quarantine.jsonl").read_text().splitlines()]


def test_quarantine_names_every_bad_line_and_why(prepped, mixed) -> None:
    out, manifest, _ = prepped
    entries = _quarantine(out)
    assert all({"file", "line", "check", "reason"} <= set(e) and e["reason"] for e in entries)
    got = {
        (Path(e["file"]).name, e["line"]): e["check"]
        for e in entries
        if Path(e["file"]).parent == mixed["dir"]
    }
    for key, check in mixed["expected"].items():
        assert got.get(key) == check, (key, check, got.get(key))
    truncated = [e for e in entries if e["file"].endswith("truncated.jsonl.gz")]
    assert truncated and truncated[-1]["check"] == "read"
    # Nothing else from our own files was rejected, and nothing vanished silently.
    planted = set(mixed["expected"]) | {(Path(e["file"]).name, e["line"]) for e in truncated}
    assert set(got) <= planted
    counts = manifest["counts"]
    assert counts["read"] == counts["kept"] + counts["quarantined"]
    assert manifest["quarantine"]["records"] == len(entries)
    assert counts["duplicates_exact"] >= 1 and counts["duplicates_near"] >= 1


def _index(out: Path, manifest: dict) -> list[dict]:
    rows = []
    for split, info in manifest["splits"].items():
        for shard in info["shards"]:
            for line in (out / shard["index"]).read_text().splitlines():
                rows.append({**json.loads(line), "split": split, "shard": shard["path"]})
    return rows


def test_every_domain_and_format_reaches_the_shards(prepped, mixed, registry) -> None:
    out, manifest, _ = prepped
    ids = {r["trajectory"] for r in _index(out, manifest)}
    assert "toylog-session" in ids  # domain importer
    assert ids & mixed["good"]  # unified JSONL
    gz_ids = {f"src{i % 30}-{i}" for i in range(240, 300)}
    zst_ids = {f"src{i % 30}-{i}" for i in range(300, 330)}
    assert gz_ids <= ids and zst_ids <= ids
    # Every registered real domain with recorded fixtures reaches the shards.
    domains = {r["domain"] for r in _index(out, manifest)}
    real_domains = {"terminal", "swe", "mcp", "search"} & set(registry.domains)
    assert real_domains, "the built-in domains should be registered"
    assert {"toyshell", *real_domains} <= domains, domains


def test_no_source_is_in_two_splits(prepped) -> None:
    out, manifest, _ = prepped
    splits_of: dict[str, set[str]] = {}
    for row in _index(out, manifest):
        splits_of.setdefault(row["source"], set()).add(row["split"])
    assert all(len(s) == 1 for s in splits_of.values())
    assert len({next(iter(s)) for s in splits_of.values()}) >= 2  # the split really splits
    for source, split in manifest["sources"].items():
        assert splits_of.get(source, {split}) == {split}


def test_masking_report_matches_configured_ratios(prepped) -> None:
    _, manifest, config = prepped
    cats = manifest["masking"]["categories"]
    checked = 0
    for name, row in cats.items():
        p, n = config.mask.keep[name], row["spans"]
        if n < 30:
            continue
        sigma = math.sqrt(p * (1 - p) / n)
        assert abs(row["kept_span_share"] - p) <= 4 * sigma + 1e-9, (name, row)
        assert abs(row["kept_share"] - p) <= 6 * sigma + 0.02, (name, row)
        checked += 1
    assert checked >= 5
    assert {"transform", "boilerplate", "echo"} <= {k for k, r in cats.items() if r["spans"] >= 30}


def test_shards_carry_roles_weights_and_exact_tokens(prepped, registry) -> None:
    from awctl.models.tokenizer import load_tokenizer

    out, manifest, _ = prepped
    tok = load_tokenizer(out / "tokenizer")
    assert manifest["tokenizer"]["vocab_size"] == len(tok)
    shard_info = manifest["splits"]["train"]["shards"][0]
    t = load_shard(out / shard_info["path"])
    assert t["input_ids"].shape[1] == 512 and t["input_ids"].dtype == np.int32
    w, roles, cats = t["loss_weights"], t["role_ids"], t["category_ids"]
    # cpt: only observation tokens carry loss; system and action never do.
    assert (w[(roles == ROLE_IDS["system"]) | (roles == ROLE_IDS["action"])] == 0).all()
    assert (w[roles == ROLE_IDS["observation"]] > 0).any()
    echo = cats == CATEGORY_IDS["echo"]
    assert w[echo].mean() < 0.2 and w[cats == CATEGORY_IDS["expansion"]].min() == 1.0
    # Role spans come from offsets of one tokenization: the action tokens of a document decode to
    # exactly its actions.
    index = [json.loads(x) for x in (out / shard_info["index"]).read_text().splitlines()]
    first = next(r for r in index if r["trajectory"].startswith("src"))
    row = datagen.make_rows(330, [f"src{k}" for k in range(30)], seed=1)[
        int(first["trajectory"].split("-")[1])
    ]
    b, k = first["block"], first["doc"]
    sel = t["doc_ids"][b] == k
    if sel.sum() < 512:  # whole document in this block
        ids = t["input_ids"][b][sel & (roles[b] == ROLE_IDS["action"])]
        assert tok.decode(ids) == "".join(turn["action"] for turn in row["turns"])
    # Positions restart per document.
    assert (t["position_ids"][b][sel] == np.arange(sel.sum())).all()


def test_shard_slices_merge_into_the_full_run(prepped, mixed, tmp_path) -> None:
    out, manifest, config = prepped
    tok_dir = str(out / "tokenizer")
    parts = []
    for i in range(2):
        cfg = config.model_copy(
            update={"out": str(tmp_path / f"s{i}"), "shard": f"{i}/2", "tokenizer": tok_dir}
        )
        run_prep(cfg, plugins.get_registry().domains)
        parts.append(tmp_path / f"s{i}")
    merged = merge_outputs(parts, tmp_path / "merged")
    full_q = {(e["file"], e["line"], e["check"]): e for e in _quarantine(out)}
    merged_q = {(e["file"], e["line"], e["check"]) for e in _quarantine(tmp_path / "merged")}
    # Slices are cut by content hash, so exact duplicates always meet; a near-duplicate whose original
    # went to the other slice is the one thing a fan-out can keep that a single run drops.
    assert merged_q <= set(full_q)
    straddling = {full_q[k]["trajectory_id"] for k in set(full_q) - merged_q}
    assert all(k[2] == "dedupe:near" for k in set(full_q) - merged_q)
    full_ids = sorted(r["trajectory"] for r in _index(out, manifest))
    merged_ids = sorted(r["trajectory"] for r in _index(tmp_path / "merged", merged))
    assert sorted(set(merged_ids) - straddling) == sorted(set(full_ids)), (
        set(merged_ids) ^ set(full_ids),
        straddling,
    )
    assert merged["counts"]["kept"] == manifest["counts"]["kept"] + len(straddling)
    for info in merged["splits"].values():
        for shard in info["shards"]:
            assert (tmp_path / "merged" / shard["path"]).exists()
    if not straddling:  # masking decisions do not depend on sharding
        assert merged["masking"]["categories"] == manifest["masking"]["categories"]


def test_rerun_with_worker_processes_is_byte_identical(prepped, tmp_path) -> None:
    out, manifest, config = prepped
    again = run_prep(
        config.model_copy(
            update={"out": str(tmp_path / "again"), "tokenizer": str(out / "tokenizer"), "workers": 2}
        ),
        plugins.get_registry().domains,
    )
    a = [s["sha256"] for info in manifest["splits"].values() for s in info["shards"]]
    b = [s["sha256"] for info in again["splits"].values() for s in info["shards"]]
    assert a == b


def test_sft_mode_trains_whole_assistant_turns(tmp_path, registry, prepped) -> None:
    out, _, _ = prepped
    row = datagen.make_rows(1, ["s"], seed=5)[0]
    row["turns"][0]["reasoning"] = "The file is new, so the tool reports it."
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    res = {}
    for mode in ("cpt", "sft"):
        m = run_prep(
            PrepConfig(
                inputs=[str(path)],
                out=str(tmp_path / mode),
                tokenizer=str(out / "tokenizer"),
                mode=mode,
                block_size=2048,
                split="train=1",
            ),
            plugins.get_registry().domains,
        )
        res[mode] = load_shard(tmp_path / mode / m["splits"]["train"]["shards"][0]["path"])
    sft, cpt = res["sft"], res["cpt"]
    obs = sft["role_ids"] == ROLE_IDS["observation"]
    reasoning = sft["role_ids"] == ROLE_IDS["reasoning"]
    assert reasoning.any() and (sft["loss_weights"][obs | reasoning] == 1).all()
    assert (cpt["loss_weights"][reasoning] == 0).all()
    assert (sft["loss_weights"][sft["role_ids"] == ROLE_IDS["action"]] == 0).all()
    np.testing.assert_array_equal(sft["input_ids"], cpt["input_ids"])
    assert cpt["loss_weights"].sum() < sft["loss_weights"].sum()
