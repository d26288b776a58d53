"""Tokenizers: train a small byte-level BPE locally (for tiny random-init models) and load any HF one.

A trained tokenizer is a ``transformers.PreTrainedTokenizerFast`` with

* special tokens ``<|bos|>``, ``<|eos|>``, ``<|pad|>``, ``<|unk|>`` and the chat role markers
  ``<|system|>``, ``<|user|>``, ``<|assistant|>``, ``<|end|>``;
* added (non-special) tokens for the simulator's output tags (``<think>``, ``</think>``,
  ``<predicted_observation>``, ``</predicted_observation>``), so a tiny model sees them as one token;
* a Jinja ``chat_template`` for system/user/assistant messages::

      <|bos|><|system|>\\n{system}<|end|>\\n<|user|>\\n{action}<|end|>\\n<|assistant|>\\n{obs}<|end|>\\n

  Message contents are inserted verbatim (never stripped), so callers can find them by offset in the
  rendered text.

Offsets returned by the tokenizer are exact character offsets into the input (byte-level BPE with
``trim_offsets=False``), which :mod:`awctl.data.chat_tokens` relies on to assign role spans.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from awctl.errors import AwctlError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

BOS, EOS, PAD, UNK = "<|bos|>", "<|eos|>", "<|pad|>", "<|unk|>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>")
SPECIAL_TOKENS = (BOS, EOS, PAD, UNK, *ROLE_TOKENS)
TAG_TOKENS = ("<think>", "</think>", "<predicted_observation>", "</predicted_observation>")

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('chat roles must be system, user or assistant, got ' + message['role']) }}"
    "{% endif %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def train_bpe_tokenizer(
    texts: Iterable[str], vocab_size: int = 4096, out_dir: Path | None = None
) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on ``texts`` (streamed once) and wrap it for transformers.

    ``vocab_size`` counts the 256 byte symbols, the special and tag tokens and the learned merges; it
    must be at least 300. With ``out_dir`` the tokenizer is saved there (``save_pretrained``), so
    :func:`load_tokenizer` and ``AutoTokenizer.from_pretrained`` load it back unchanged.
    Training is deterministic for the same texts in the same order.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if vocab_size < 300:
        raise AwctlError(
            f"vocab_size {vocab_size} is too small for a byte-level BPE tokenizer",
            hint="use at least 300 (256 bytes + special tokens + some merges); 4096 suits tiny models",
        )
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # trim_offsets=False: offsets must cover every character, spaces included, for role-span assignment.
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_tokens(list(TAG_TOKENS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        additional_special_tokens=list(ROLE_TOKENS),
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = 1_000_000
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        fast.save_pretrained(str(out_dir))
    return fast


def load_tokenizer(name_or_path: str | Path) -> PreTrainedTokenizerFast:
    """Load a fast tokenizer from a local directory, a ``.gguf`` model file (its embedded tokenizer and
    chat template; ``pkg:<package>/<file>.gguf`` too) or a model name already in the local HF cache.

    Never downloads (``local_files_only``). Raises :class:`AwctlError` when nothing is found, when the
    tokenizer is not a fast one (offsets are needed) or when it has no chat template.
    """
    from transformers import AutoTokenizer

    from awctl.models.paths import expand_pkg

    name_or_path = expand_pkg(str(name_or_path))
    kwargs: dict[str, Any] = {"local_files_only": True}
    source = Path(name_or_path)
    if source.suffix == ".gguf" and source.is_file():
        name_or_path, kwargs["gguf_file"] = source.parent, source.name
    try:
        tok = AutoTokenizer.from_pretrained(str(name_or_path), **kwargs)
    except (OSError, ValueError) as exc:
        raise AwctlError(
            f"cannot load tokenizer {str(name_or_path)!r}: {exc}".splitlines()[0],
            hint="pass a local tokenizer directory, or `--tokenizer train:4096` to train a BPE one",
        ) from None
    if not getattr(tok, "is_fast", False):
        raise AwctlError(
            f"tokenizer {str(name_or_path)!r} is not a fast tokenizer",
            hint="prep needs character offsets; use a tokenizer with a tokenizer.json",
        )
    if not getattr(tok, "chat_template", None):
        raise AwctlError(
            f"tokenizer {str(name_or_path)!r} has no chat template",
            hint="set tokenizer.chat_template, or train one with `--tokenizer train:4096`",
        )
    return tok


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """A sha256 of the tokenizer's serialized vocabulary, merges, special tokens and chat template."""
    import hashlib

    h = hashlib.sha256()
    h.update(tokenizer.backend_tokenizer.to_str().encode())
    h.update((tokenizer.chat_template or "").encode())
    return h.hexdigest()
