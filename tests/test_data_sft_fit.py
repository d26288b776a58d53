"""SFT examples longer than a block keep their target with the action it answers (never split into pieces
that restart their context), and best-fit-decreasing packing fills blocks from a bounded buffer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from awctl.data.chat_tokens import ROLE_IDS, ChatEncoder, Document
from awctl.data.masking import InfoMaskPolicy
from awctl.data.packing import BlockPacker
from awctl.data.pipeline import PrepConfig, run_prep
from awctl.data.sft_fit import action_start, fit_sft_document, target_span
from awctl.data.shards import load_shard
from awctl.models.tiny import default_tiny_model
from awctl.models.tokenizer import load_tokenizer
from awctl.trajectory import SystemPrompt, Trajectory, Turn


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(default_tiny_model())


def _traj(turns: int, system_words: int = 40, name: str = "t") -> Trajectory:
    system = SystemPrompt(raw="You simulate a shell. " + " ".join(f"fact{k}" for k in range(system_words)))
    return Trajectory(
        id=name,
        domain="nowhere",
        system=system,
        turns=[Turn(action=f"run command number {k} with argument arg{k}",
                    observation=f"output line for command {k}\n" * 3) for k in range(turns)],
    )


def _encode(tokenizer, traj: Trajectory) -> Document:
    labels = InfoMaskPolicy().label(traj, traj.system.render())
    return ChatEncoder(tokenizer, "sft", sft_target="last").encode([(traj, traj.system.render(), labels)])[0]


def _ids_text(tokenizer, ids) -> str:
    return tokenizer.decode([int(i) for i in ids])


def test_short_document_is_unchanged(tokenizer) -> None:
    doc = _encode(tokenizer, _traj(2))
    assert fit_sft_document(doc, len(doc)) is doc


def test_long_example_keeps_target_action_system_and_recent_history(tokenizer) -> None:
    doc = _encode(tokenizer, _traj(12))
    t0, t1 = target_span(doc)
    a0 = action_start(doc, t0)
    system_end = int(np.flatnonzero(doc.role_ids == ROLE_IDS["system"])[-1]) + 1
    block = system_end + (len(doc) - a0) + 40  # room for the system, action + target and some history
    assert block < len(doc)
    fitted = fit_sft_document(doc, block)
    assert fitted is not None and len(fitted) == block
    # The tail (action + target + end markup) is intact, and the target keeps all of its loss weight.
    tail = len(doc) - a0
    np.testing.assert_array_equal(fitted.input_ids[-tail:], doc.input_ids[a0:])
    assert fitted.loss_weights.sum() == doc.loss_weights[t0:t1].sum() == doc.loss_weights.sum()
    assert "run command number 11 with argument arg11" in _ids_text(tokenizer, fitted.input_ids[-tail:])
    # The whole system prompt comes first.
    np.testing.assert_array_equal(fitted.input_ids[:system_end], doc.input_ids[:system_end])
    # Then the most recent history: the 40 tokens right before the action.
    np.testing.assert_array_equal(fitted.input_ids[system_end:-tail], doc.input_ids[a0 - 40 : a0])
    assert "output line for command 10" in _ids_text(tokenizer, fitted.input_ids[system_end:-tail])
    assert "arg0" not in _ids_text(tokenizer, fitted.input_ids)


def test_history_targets_without_their_action_lose_their_weight(tokenizer) -> None:
    # sft_target="all": earlier assistant turns are targets too; one whose action was cut must not count.
    traj = _traj(6)
    labels = InfoMaskPolicy().label(traj, traj.system.render())
    doc = ChatEncoder(tokenizer, "sft", sft_target="all").encode([(traj, traj.system.render(), labels)])[0]
    t0, _ = target_span(doc)
    a0 = action_start(doc, t0)
    system_end = int(np.flatnonzero(doc.role_ids == ROLE_IDS["system"])[-1]) + 1
    block = system_end + (len(doc) - a0) + 10  # 10 history tokens: the end of the previous observation
    fitted = fit_sft_document(doc, block)
    assert fitted is not None
    history = slice(system_end, system_end + 10)
    assert (fitted.role_ids[history] == ROLE_IDS["observation"]).any()
    assert (fitted.loss_weights[history] == 0).all()
    assert fitted.loss_weights.sum() == doc.loss_weights[t0:].sum()


def test_system_prompt_start_kept_when_it_does_not_fit(tokenizer) -> None:
    doc = _encode(tokenizer, _traj(3, system_words=300))
    t0, _ = target_span(doc)
    a0 = action_start(doc, t0)
    tail = len(doc) - a0
    fitted = fit_sft_document(doc, tail + 25)
    assert fitted is not None
    np.testing.assert_array_equal(fitted.input_ids[:25], doc.input_ids[:25])
    np.testing.assert_array_equal(fitted.input_ids[25:], doc.input_ids[a0:])
    assert "You simulate a shell" in _ids_text(tokenizer, fitted.input_ids[:25])


def test_example_whose_action_and_target_do_not_fit_is_dropped(tokenizer) -> None:
    doc = _encode(tokenizer, _traj(3))
    t0, _ = target_span(doc)
    assert fit_sft_document(doc, len(doc) - action_start(doc, t0) - 1) is None


def test_prep_sft_mode_never_splits_examples_and_counts_cuts_and_drops(tmp_path: Path, tokenizer) -> None:
    trajs = [_traj(12, name="long"), _traj(2, name="short"),
             _traj(1, name="huge").model_copy(update={"turns": [Turn(action="cat big",
                                                                    observation="word " * 400)]})]
    src = tmp_path / "sft.jsonl"
    src.write_text("".join(json.dumps(t.model_dump(mode="json")) + "\n" for t in trajs), encoding="utf-8")
    tok_dir = tmp_path / "tok"
    tokenizer.save_pretrained(str(tok_dir))
    block = 320  # "short" fits whole, "long" is cut, "huge" (its target alone) is dropped
    manifest = run_prep(PrepConfig(inputs=[str(src)], out=str(tmp_path / "out"), tokenizer=str(tok_dir),
                                   mode="sft", sft_target="last", block_size=block, split="train=1",
                                   verify=False, dedupe=False, allow_unknown_domains=True), {})
    counts = manifest["counts"]
    assert counts["documents_split_across_blocks"] == 0
    assert counts["sft_examples_cut"] == 1 and counts["sft_examples_dropped"] == 1
    shard = manifest["splits"]["train"]["shards"][0]
    arrays = load_shard(tmp_path / "out" / shard["path"])
    texts = []
    for b in range(len(arrays["input_ids"])):
        for d in set(arrays["doc_ids"][b].tolist()) - {-1}:
            sel = arrays["doc_ids"][b] == d
            texts.append(_ids_text(tokenizer, arrays["input_ids"][b][sel]))
            # Every packed document holds a target: no piece without one wastes steps.
            assert arrays["loss_weights"][b][sel].sum() > 0
    assert len(texts) == 2
    long_text = next(t for t in texts if "arg11" in t)
    assert long_text.index("You simulate a shell") < long_text.index("arg11") \
        < long_text.index("output line for command 11")


def _piece_doc(n: int, name: str) -> Document:
    return Document(
        input_ids=np.arange(n, dtype=np.int32) + 1,
        role_ids=np.full(n, 3, dtype=np.uint8),
        loss_weights=np.ones(n, dtype=np.float32),
        category_ids=np.zeros(n, dtype=np.int8),
        traj_id=name,
    )


def test_best_fit_decreasing_fills_blocks_that_arrival_order_would_waste() -> None:
    # Arrival order 4, 4, 6, 6 with blocks of 10: placed as they come, [4+4, 6, 6] = 3 blocks;
    # longest first, each 6 pairs with a 4: 2 full blocks.
    sizes = [4, 4, 6, 6]
    for buffer, expected in ((1, 3), (4, 2)):
        packer = BlockPacker(10, 0, max_open=4, buffer=buffer)
        blocks = [b for k, n in enumerate(sizes) for b in packer.add(_piece_doc(n, f"d{k}"))]
        blocks += list(packer.flush())
        assert len(blocks) == expected
        assert sum(b.fill for b in blocks) == sum(sizes)
        assert sorted(t for b in blocks for t in b.traj_ids) == ["d0", "d1", "d2", "d3"]


def test_packer_buffer_bounds_memory() -> None:
    packer = BlockPacker(8, 0, max_open=2, buffer=3)
    out = []
    for k in range(30):
        out.extend(packer.add(_piece_doc(5, f"d{k}")))
        assert len(packer._pending) < 3 and len(packer._open) <= 2
    out.extend(packer.flush())
    assert sum(b.docs for b in out) == 30
