"""Segment-wise packed attention computes exactly what the dense block-diagonal causal mask computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _model(tmp: Path, kv_heads: int | None = None):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=kv_heads or 4, head_dim=16,
                      max_position_embeddings=256, attn_implementation="sdpa")
    return LlamaForCausalLM(cfg).train()


def _batch():
    from awctl.train.data import Batch

    # Row 0: three documents and trailing padding; row 1: padding at the front, then one document;
    # row 2: one document filling the row (the single-call fast path).
    doc = np.array([[0] * 5 + [1] * 7 + [2] * 3 + [-1] * 5,
                    [-1] * 4 + [3] * 16,
                    [4] * 20])
    pos = np.zeros_like(doc)
    for r in range(doc.shape[0]):
        for i in range(1, doc.shape[1]):
            pos[r, i] = pos[r, i - 1] + 1 if doc[r, i] == doc[r, i - 1] else 0
    g = np.random.default_rng(0)
    ids = g.integers(3, 97, size=doc.shape)
    weights = (doc >= 0).astype(np.float32) * g.uniform(0.2, 1.0, size=doc.shape).astype(np.float32)
    return Batch(input_ids=torch.from_numpy(ids), position_ids=torch.from_numpy(pos),
                 doc_ids=torch.from_numpy(doc), loss_weights=torch.from_numpy(weights),
                 category_ids=torch.from_numpy(np.where(doc >= 0, ids % 8 - 1, -1)))


def test_segments_from_doc_ids_skip_padding() -> None:
    from awctl.train.packed_attention import segments_from_doc_ids

    segs = segments_from_doc_ids(_batch().doc_ids)
    assert segs == [[(0, 5), (5, 12), (12, 15)], [(4, 20)], [(0, 20)]]


@pytest.mark.parametrize("kv_heads", [None, 2])
def test_packed_attention_matches_dense_mask_logits_and_gradients(tmp_path: Path, kv_heads: int | None) -> None:
    from awctl.data.packing import additive_attention_mask
    from awctl.train.losses import packed_lm_loss, target_weights
    from awctl.train.packed_attention import packed_attention, segments_from_doc_ids

    model = _model(tmp_path, kv_heads)
    b = _batch()
    real = b.doc_ids >= 0
    with torch.no_grad():
        dense = model(input_ids=b.input_ids, position_ids=b.position_ids,
                      attention_mask=additive_attention_mask(b.doc_ids), use_cache=False).logits
        with packed_attention(model):
            packed = model(input_ids=b.input_ids, position_ids=b.position_ids, use_cache=False,
                           awctl_segments=segments_from_doc_ids(b.doc_ids)).logits
    assert model.config._attn_implementation == "sdpa"  # restored after the context
    assert torch.allclose(dense[real], packed[real], atol=1e-5)

    denom = float(target_weights(b).sum())
    loss, stats = packed_lm_loss(model, b, denom)  # segment-wise path (model is on sdpa)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.config._attn_implementation = "eager"  # forces the dense additive-mask path
    loss2, stats2 = packed_lm_loss(model, b, denom)
    loss2.backward()
    assert float(loss.detach()) == pytest.approx(float(loss2.detach()), rel=1e-5)
    for g1, p in zip(grads, model.parameters(), strict=True):
        assert torch.allclose(g1, p.grad, atol=1e-5)
    # The per-category breakdown sums to the total; uncategorised targets count only in the total.
    assert stats.weight == pytest.approx(denom, rel=1e-6)
    assert sum(w for _, w in stats.per_category.values()) < stats.weight
    assert stats.per_category.keys() == stats2.per_category.keys()
    for name, (s, w) in stats.per_category.items():
        assert (s, w) == pytest.approx(tuple(stats2.per_category[name]), rel=1e-4)
    from awctl.data.masking import CATEGORIES

    cats, tw = b.category_ids[:, 1:], target_weights(b)
    for cid, name in enumerate(CATEGORIES):
        expect = float((tw * (cats == cid)).sum())
        assert stats.per_category.get(name, [0.0, 0.0])[1] == pytest.approx(expect, rel=1e-5, abs=1e-9)


def test_lm_head_choice_changes_cost_not_the_loss_or_gradients(tmp_path: Path) -> None:
    from awctl.train.losses import packed_lm_loss, target_weights

    model = _model(tmp_path)
    b = _batch()
    denom = float(target_weights(b).sum())
    results = []
    for head in ("weighted", "all", "auto"):
        model.zero_grad()
        loss, _ = packed_lm_loss(model, b, denom, lm_head=head)
        loss.backward()
        results.append((float(loss.detach()), [p.grad.clone() for p in model.parameters()]))
    for loss, grads in results[1:]:
        assert loss == pytest.approx(results[0][0], rel=1e-6)
        for g0, g in zip(results[0][1], grads, strict=True):
            assert torch.allclose(g0, g, atol=1e-6)
    with pytest.raises(ValueError, match="lm_head"):
        packed_lm_loss(model, b, denom, lm_head="some")


def test_causal_mode_is_the_hugging_face_loss_on_the_same_loss_tokens(tmp_path: Path) -> None:
    """What ``benchmarks/train.py`` relies on: with 0/1 weights, ``attention="causal"`` computes exactly the
    stock transformers causal-LM loss when its labels are the tokens whose target weight is non-zero."""
    from awctl.train.losses import packed_lm_loss, target_weights

    model = _model(tmp_path)
    b = _batch()
    b.loss_weights = (b.loss_weights > 0.5).float()
    tw = target_weights(b)
    labels = torch.full_like(b.input_ids, -100)
    labels[:, 1:] = torch.where(tw > 0, b.input_ids[:, 1:], -100)
    hf = model(input_ids=b.input_ids, labels=labels, use_cache=False).loss
    ours, stats = packed_lm_loss(model, b, float(tw.sum()), attention="causal", lm_head="all")
    assert float(ours.detach()) == pytest.approx(float(hf.detach()), rel=1e-5)
    assert stats.weight == float((labels != -100).sum())
    # and per-document attention is a different function of the same block (documents do not see each other)
    docs, _ = packed_lm_loss(model, b, float(tw.sum()))
    assert abs(float(docs.detach()) - float(ours.detach())) > 1e-4
