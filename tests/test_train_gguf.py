"""Training starts from a packaged GGUF file (SmolLM2-135M-Instruct) and saves a plain HF directory."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_lora_model_from_gguf_saves_merged_weights_that_reload_equal(smollm2_gguf, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from awctl.train.config import LoraSpec
    from awctl.train.model import load_for_training, save_model_dir

    model, tok = load_for_training(smollm2_gguf, lora=LoraSpec(r=4, alpha=8))
    ids = tok("root@sandbox:/workspace# ls", return_tensors="pt")["input_ids"]
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    with torch.no_grad():  # move the adapter off zero so the merged weights differ from the base
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.add_(0.01)
    model.eval()
    with torch.no_grad():
        want = model(input_ids=ids).logits
    folder = save_model_dir(model, tok, tmp_path / "ckpt")
    reloaded = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    assert getattr(reloaded, "hf_quantizer", None) is None
    with torch.no_grad():
        got = reloaded(input_ids=ids).logits
    assert torch.allclose(got, want, atol=1e-4)
