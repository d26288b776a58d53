"""Tiny random-init causal LMs for tests, benchmarks and the CPU quickstart.

:func:`build_tiny_model` saves a ``LlamaForCausalLM`` plus its tokenizer as an ordinary Hugging Face
directory, so transformers, vLLM (head_dim 32 is one vLLM-CPU supports) and the trainer load it
unchanged. :func:`default_tiny_model` builds the project's default ``"tiny"`` model once — a BPE
tokenizer trained on text made from the registered domains' prompts (no downloads) — and caches it under
``$AWCTL_CACHE_DIR`` (default ``~/.cache/awctl``), keyed by a hash of the training text and settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError

TINY_SETTINGS: dict[str, int] = {"layers": 2, "hidden": 64, "heads": 2, "head_dim": 32, "vocab_size": 2048}


def cache_dir() -> Path:
    """The user cache folder for built artefacts (``$AWCTL_CACHE_DIR`` or ``~/.cache/awctl``)."""
    return Path(os.environ.get("AWCTL_CACHE_DIR") or Path.home() / ".cache" / "awctl").expanduser()


def build_tiny_model(
    tokenizer: Any,
    *,
    out_dir: str | Path,
    layers: int = 2,
    hidden: int = 64,
    heads: int = 2,
    head_dim: int = 32,
    kv_heads: int | None = None,
    intermediate: int | None = None,
    max_positions: int = 8192,
    seed: int = 0,
) -> Path:
    """Save a random-init Llama model with ``tokenizer`` into ``out_dir`` and return the directory.

    Weights are deterministic for a given ``seed`` and shape. The generation config stops on the
    tokenizer's eos token and its ``<|end|>`` end-of-turn marker when it has one.
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    if hidden % heads:
        raise AwctlError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
    out = Path(out_dir)
    vocab = tokenizer.get_vocab()
    eos_ids = [i for i in (tokenizer.eos_token_id, vocab.get("<|end|>")) if i is not None]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=intermediate or hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads or heads,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos_ids[0] if eos_ids else None,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos_ids or None,
        pad_token_id=tokenizer.pad_token_id,
    )
    out.mkdir(parents=True, exist_ok=True)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a tiny save needs no progress bar in test logs
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


# A fixed sample of what world-model prompts and observations look like in the seven domains. The tiny
# tokenizer trains on this and awctl's own generic prompts only, never on installed plugins' text, so the
# tiny model (and its cache key) is the same in every environment.
_SAMPLE = """\
### Turn 1
**Action:**
ls -la
**Environment Observation:**
total 12
drwxr-xr-x 2 root root 4096 Jan  1 00:00 .
-rw-r--r-- 1 root root   12 Jan  1 00:00 notes.txt
root@sandbox:~/work# cat notes.txt
hello world
root@sandbox:~/work# python3 -c 'print(1/0)'
Traceback (most recent call last):
  File "<string>", line 1, in <module>
ZeroDivisionError: division by zero
$ git status
On branch main
nothing to commit, working tree clean
{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_notes", "arguments": {"q": "x"}}}
{"content": [{"type": "text", "text": "3 results"}], "isError": false, "structuredContent": null}
[1] https://example.org/page Title of the page
A snippet of the page text with a date 2024-05-01 and a number 42.
{"tool": "str_replace_editor", "command": "view", "path": "/testbed/src/app.py"}
     1\timport os
     2\tdef main():
[12] link 'Add to cart', clickable
\t[13] textbox 'Search' value='shoes', focused
click('13') fill('13', 'red shoes') scroll(0, 200) goto('http://127.0.0.1/')
<node index="0" text="Settings" resource-id="android:id/title" class="android.widget.TextView"/>
{"action_type": "click", "index": 3} pyautogui.click(100, 200) pyautogui.write('hi')
"""


def tiny_training_text() -> list[str]:
    """Deterministic text for the tiny tokenizer: awctl's generic simulator prompt in every wording
    variant and a fixed sample of the seven domains' texts (never an installed plugin's)."""
    from awctl.prompts import PromptBuilder
    from awctl.trajectory import SystemPrompt

    generic = PromptBuilder(domain_title="generic")
    sample = SystemPrompt(
        task_description="Complete the task.", simulation_instruction=generic.simulation_instruction
    )
    return [*(generic.build(sample, v) for v in range(generic.variants)), _SAMPLE]


def default_tiny_model(refresh: bool = False) -> Path:
    """The project's default tiny model directory, built on first use (a few seconds) and cached.

    Concurrent first calls are safe: each builds in a temporary folder and the first rename wins.
    """
    texts = tiny_training_text()
    h = hashlib.sha256(repr(sorted(TINY_SETTINGS.items())).encode())
    for t in texts:
        h.update(t.encode())
    target = cache_dir() / "models" / f"tiny-{h.hexdigest()[:12]}"
    if (target / "config.json").is_file() and not refresh:
        return target
    from awctl.models.tokenizer import train_bpe_tokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tiny-", dir=target.parent))
    try:
        tok = train_bpe_tokenizer(texts, vocab_size=TINY_SETTINGS["vocab_size"])
        s = TINY_SETTINGS
        build_tiny_model(
            tok, out_dir=tmp, layers=s["layers"], hidden=s["hidden"], heads=s["heads"], head_dim=s["head_dim"]
        )
        if refresh and target.exists():
            shutil.rmtree(target, ignore_errors=True)
        # OSError: another process finished first; its model is identical.
        with contextlib.suppress(OSError):
            tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
