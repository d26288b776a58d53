"""Loading the model to train: a Hugging Face directory, a GGUF file, or a tiny random-init Llama.

:func:`load_for_training` returns ``(model, tokenizer)`` in float32 (autocast adds bf16 on GPU), with the
requested attention implementation, gradient checkpointing and LoRA adapters. :func:`save_checkpoint_dir`
writes a directory transformers and vLLM load unchanged: LoRA adapters are merged into a copy first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from awctl.errors import AwctlError
from awctl.train.config import LoraSpec, TinySpec

ADAPTER_DIR = "adapter"


def build_tiny(tokenizer_dir: str | Path | None, spec: TinySpec, out_dir: Path, seed: int) -> Path:
    """Build (once) a random-init Llama for ``tokenizer_dir`` under ``out_dir``; returns the directory."""
    from awctl.models.tiny import build_tiny_model, default_tiny_model
    from awctl.models.tokenizer import load_tokenizer

    if (out_dir / "config.json").is_file():
        return out_dir
    tok_dir = Path(tokenizer_dir) if tokenizer_dir else default_tiny_model()
    tokenizer = load_tokenizer(tok_dir)
    return build_tiny_model(
        tokenizer,
        out_dir=out_dir,
        layers=spec.layers,
        hidden=spec.hidden,
        heads=spec.heads,
        head_dim=spec.head_dim,
        kv_heads=spec.kv_heads,
        intermediate=spec.intermediate,
        max_positions=spec.max_positions,
        seed=seed,
    )


def load_for_training(
    path: str | Path,
    *,
    attention: str = "sdpa",
    gradient_checkpointing: bool = False,
    lora: LoraSpec | None = None,
    adapter_dir: Path | None = None,
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a save_pretrained directory or ``.gguf`` file, float32, train mode.

    With ``lora`` the model is wrapped by peft; ``adapter_dir`` (a checkpoint's adapter) restores trained
    adapter weights instead of fresh ones.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.models.backends.transformers_backend import resolve_model_path

    folder, gguf = resolve_model_path(path)
    kwargs: dict[str, Any] = {"local_files_only": True}
    if gguf:
        kwargs["gguf_file"] = gguf
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(
            str(folder), dtype=torch.float32, attn_implementation=attention, **kwargs
        )
    except (OSError, ValueError) as exc:
        raise AwctlError(
            f"cannot load model {str(path)!r} for training: {str(exc).splitlines()[0]}",
            hint="pass a save_pretrained directory, a .gguf file, or 'tiny'",
        ) from None
    if gguf:
        _drop_gguf_quantizer(model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    if lora is not None:
        from peft import LoraConfig, PeftModel, get_peft_model

        if adapter_dir is not None and adapter_dir.is_dir():
            model = PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=True)
        else:
            cfg = LoraConfig(
                r=lora.r,
                lora_alpha=lora.alpha,
                lora_dropout=lora.dropout,
                target_modules=list(lora.target_modules),
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, cfg)
    model.train()
    return model, tokenizer


def _drop_gguf_quantizer(model: Any) -> None:
    """A GGUF file loads dequantised into float32 weights, but transformers keeps a GGUF "quantizer" on the
    model that makes ``save_pretrained`` refuse; the trained weights are plain tensors, so drop it."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def is_peft(model: Any) -> bool:
    return hasattr(model, "peft_config")


def save_model_dir(model: Any, tokenizer: Any, out: Path, *, merge: bool = True) -> Path:
    """Write ``model`` (unwrapped from DDP/DeepSpeed) as a plain HF directory. A LoRA model is saved both
    as ``out/adapter`` (for resume) and, with ``merge``, merged into full weights in ``out``."""
    import copy

    out.mkdir(parents=True, exist_ok=True)
    inner = getattr(model, "module", model)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if is_peft(inner):
        inner.save_pretrained(str(out / ADAPTER_DIR))
        if merge:
            merged = copy.deepcopy(inner).merge_and_unload()
            merged.save_pretrained(str(out))
    else:
        inner.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out
