"""Packed blocks keep documents apart: a real (tiny, random-init) Llama gives the same logits for each
document inside a packed block — with the block-diagonal causal mask and reset positions — as for the
document run alone."""

from __future__ import annotations

import numpy as np
import pytest

from awctl.data.chat_tokens import Document
from awctl.data.packing import (
    BlockPacker,
    additive_attention_mask,
    block_attention_mask,
    position_ids_from_doc_ids,
)


def _doc(ids: list[int], name: str) -> Document:
    n = len(ids)
    return Document(
        input_ids=np.asarray(ids, dtype=np.int32),
        role_ids=np.full(n, 3, dtype=np.uint8),
        loss_weights=np.ones(n, dtype=np.float32),
        category_ids=np.zeros(n, dtype=np.int8),
        traj_id=name,
    )


def _pack(docs: list[Document], block_size: int, pad_id: int = 0) -> list:
    packer = BlockPacker(block_size, pad_id, max_open=2)
    blocks = [b for d in docs for b in packer.add(d)]
    return blocks + list(packer.flush())


def test_packer_keeps_every_token_once_and_resets_positions() -> None:
    rng = np.random.default_rng(0)
    docs = [
        _doc(list(rng.integers(5, 90, size=int(n))), f"d{i}") for i, n in enumerate(rng.integers(3, 40, 30))
    ]
    blocks = _pack(docs, 32)
    total = sum(len(d) for d in docs)
    assert sum(b.fill for b in blocks) == total
    for b in blocks:
        assert b.input_ids.shape == (32,)
        real = b.doc_ids >= 0
        assert real.sum() == b.fill
        np.testing.assert_array_equal(b.position_ids[real], position_ids_from_doc_ids(b.doc_ids)[real])
        assert (b.loss_weights[~real] == 0).all()
    # A 40-token document cannot fit a 32-token block: it is cut, each piece restarting at position 0.
    long_blocks = _pack([_doc(list(range(1, 41)), "long")], 32)
    assert [b.fill for b in long_blocks] == [32, 8]
    assert long_blocks[1].position_ids[0] == 0


def test_a_piece_without_loss_weight_is_dropped_and_counted() -> None:
    # 40 tokens cut into 32 + 8; only the first piece has targets (e.g. a long system prompt's tail is the
    # second piece in reverse): the piece that teaches nothing never becomes a block.
    doc = _doc(list(range(1, 41)), "long")
    doc.loss_weights[32:] = 0
    packer = BlockPacker(32, 0)
    blocks = [*packer.add(doc), *packer.flush()]
    assert [b.fill for b in blocks] == [32] and packer.pieces_without_loss == 1
    doc.loss_weights[:32], doc.loss_weights[39] = 0, 1
    packer = BlockPacker(32, 0)
    assert [b.fill for b in [*packer.add(doc), *packer.flush()]] == [8] and packer.pieces_without_loss == 1


def test_block_attention_mask_is_causal_and_block_diagonal() -> None:
    doc_ids = np.array([0, 0, 1, 1, 1, -1])
    m = block_attention_mask(doc_ids)
    assert m[1, 0] and not m[0, 1]  # causal inside a document
    assert not m[2, 1] and m[4, 2]  # never across documents
    assert not m[5, 4] and m[5, 5]  # padding sees only padding


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_packed_logits_equal_documents_run_alone(attn: str) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=256,
    )
    config._attn_implementation = attn
    model = transformers.LlamaForCausalLM(config).eval()
    assert model.config._attn_implementation == attn
    rng = np.random.default_rng(1)
    docs = [_doc(list(rng.integers(1, 128, size=n)), f"d{i}") for i, n in enumerate((7, 19, 5, 12, 9))]
    blocks = _pack(docs, 48)
    assert any(b.docs >= 3 for b in blocks)  # the proof needs real packing, not one doc per block
    alone = {}
    with torch.no_grad():
        for d in docs:
            ids = torch.tensor(d.input_ids[None].astype(np.int64))
            alone[d.traj_id] = model(input_ids=ids).logits[0]
        for b in blocks:
            doc_ids = torch.tensor(b.doc_ids[None].astype(np.int64))
            out = model(
                input_ids=torch.tensor(b.input_ids[None].astype(np.int64)),
                position_ids=torch.tensor(b.position_ids[None].astype(np.int64)),
                attention_mask=additive_attention_mask(doc_ids),
            ).logits[0]
            for k, name in enumerate(b.traj_ids):
                sel = torch.tensor(b.doc_ids == k)
                torch.testing.assert_close(out[sel], alone[name], atol=1e-5, rtol=1e-5)
        # Control: without the mask and position reset the second document's logits do change,
        # so the comparison above can fail.
        b = next(b for b in blocks if b.docs >= 2)
        plain = model(input_ids=torch.tensor(b.input_ids[None].astype(np.int64))).logits[0]
        sel = torch.tensor(b.doc_ids == 1)
        assert not torch.allclose(plain[sel], alone[b.traj_ids[1]], atol=1e-3)
