"""RL generation through vLLM with weight sync (``generation = "vllm"``).

The LoRA merge runs here; the vLLM parts run in vLLM's own environment (``AWCTL_VLLM_PYTHON``, see
tests/test_backend_vllm.py) as subprocesses and skip, saying why, when it is not usable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")



def _tiny_llama(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True)
    return LlamaForCausalLM(cfg)


def test_policy_weights_of_a_plain_model_are_its_parameters() -> None:
    from awctl.rl.vllm_sync import policy_weights

    model = _tiny_llama()
    got = dict(policy_weights(model))
    assert got.keys() == dict(model.named_parameters()).keys()
    assert "lm_head.weight" not in got  # tied to the embeddings: sent once
    assert all(not t.requires_grad for t in got.values())


def test_policy_weights_merge_lora_like_merge_and_unload() -> None:
    pytest.importorskip("peft")
    import copy

    from peft import LoraConfig, get_peft_model

    from awctl.rl.vllm_sync import policy_weights

    model = get_peft_model(_tiny_llama(), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():  # B starts at zero; make the adapters do something
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    got = dict(policy_weights(model))
    want = dict(copy.deepcopy(model).merge_and_unload().named_parameters())
    assert got.keys() == want.keys()
    for name, value in want.items():
        torch.testing.assert_close(got[name], value.detach(), msg=name)
    q = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(got[q], model.get_base_model().model.layers[0].self_attn.q_proj.base_layer.weight)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # the policy is untouched


# ── vLLM, in its own environment ──


SYNC_SCRIPT = """
    import json, sys

    PROMPTS = ["ls -la", "cat notes.txt", "pwd"]

    def greedy_transformers(path):
        from awctl.backend import ChatRequest
        from awctl.models.backends.transformers_backend import TransformersBackend

        tb = TransformersBackend(path)
        try:
            return [c.token_ids for [c] in tb.generate([ChatRequest(messages=[{"role": "user", "content": p}],
                                                                    max_tokens=8) for p in PROMPTS])]
        finally:
            tb.close()

    def main():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from awctl.backend import ChatRequest
        from awctl.models.backends.vllm_backend import VLLMBackend
        from awctl.models.tiny import build_tiny_model, default_tiny_model

        base = str(default_tiny_model())
        other = str(build_tiny_model(AutoTokenizer.from_pretrained(base), out_dir=sys.argv[1], seed=1))
        be = VLLMBackend(base, weight_sync=True, enforce_eager=True, dtype="float32", max_model_len=512,
                         gpu_memory_utilization=0.15, max_num_seqs=8)
        reqs = [ChatRequest(messages=[{"role": "user", "content": p}], max_tokens=8) for p in PROMPTS]
        before = [c.token_ids for [c] in be.generate(reqs)]
        # A random tiny model's residual stream is dominated by the input embedding (greedy repeats the
        # last prompt token whatever the seed), so the new weights also amplify the attention and MLP
        # outputs: then the greedy continuation depends on them.
        new = AutoModelForCausalLM.from_pretrained(other, dtype="float32")
        with torch.no_grad():
            for name, p in new.named_parameters():
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    p.mul_(40.0)
        new.save_pretrained(other)
        sent = be.load_weights(new.named_parameters())
        after = [c.token_ids for [c] in be.generate(reqs)]
        print("RESULT " + json.dumps({"before": before, "after": after, "sent": sent,
                                      "tf_base": greedy_transformers(base), "tf_other": greedy_transformers(other)}))
        be.close()

    if __name__ == "__main__":
        main()
"""


@pytest.mark.slow
def test_vllm_load_weights_makes_generation_follow_the_new_weights(tmp_path: Path, run_vllm_script) -> None:
    out = run_vllm_script(SYNC_SCRIPT, str(tmp_path / "other"))
    assert out["sent"] > 0
    assert out["before"] == out["tf_base"]  # vLLM and transformers agree on the starting weights...
    assert out["after"] == out["tf_other"]  # ...and, after load_weights, on the new ones (no stale KV reused)
    assert out["after"] != out["before"]


GSPO_SCRIPT = """
    import importlib.util, json, os, sys
    from pathlib import Path

    def main():
        from awctl.stages.standalone import run_stage
        from awctl.trajectory import write_trajectories

        tmp, model = Path(sys.argv[1]), sys.argv[2]
        spec = importlib.util.spec_from_file_location(
            "board", Path(os.environ["AWCTL_PLUGINS_DIR"]) / "switchboard.py")
        board = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(board)
        write_trajectories(tmp / "t.jsonl", board.trajectories(1, "rl"))
        opts = {"model": model, "trajectories": [str(tmp / "t.jsonl")], "steps": 2, "group_size": 4,
                "prompts_per_step": 2, "max_tokens": 8, "optim": {"lr": 1e-3}, "generation": "vllm",
                "vllm_options": {"enforce_eager": True, "dtype": "float32", "max_model_len": 1024,
                                 "gpu_memory_utilization": 0.15, "max_num_seqs": 16}}
        result = run_stage("rl", opts, tmp / "rl", console=None)
        records = [json.loads(x) for x in (tmp / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
        print("RESULT " + json.dumps({"summary": result.summary, "records": records}))

    if __name__ == "__main__":
        main()
"""


@pytest.mark.slow
def test_gspo_generates_through_vllm_and_syncs_every_step(tmp_path: Path, switchboard, switchboard_model,
                                                          run_vllm_script) -> None:
    # The switchboard model (tests/conftest.py) solves its task part of the time: groups carry signal.
    out = run_vllm_script(GSPO_SCRIPT, str(tmp_path), str(switchboard_model))
    assert [r["step"] for r in out["records"]] == [1, 2]
    assert out["summary"]["weight_syncs"] == 2 and out["summary"]["updates"] == 2  # start weights, then after step 1
    for r in out["records"]:
        assert 0.0 < r["reward"] < 1.0 and r["completion_tokens"] > 0 and r["grad_norm"] > 0


SAMPLER_SCRIPT = """
    import json, sys

    def main():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from awctl.models.tiny import build_tiny_model, default_tiny_model
        from awctl.rl.expand import TurnPrompt
        from awctl.rl.rollout import sample_groups
        from awctl.rl.vllm_sync import VLLMSampler

        base = str(default_tiny_model())
        tok = AutoTokenizer.from_pretrained(base)
        policy = AutoModelForCausalLM.from_pretrained(
            str(build_tiny_model(tok, out_dir=sys.argv[1], seed=2)), dtype="float32")
        with torch.no_grad():  # see SYNC_SCRIPT: make greedy depend on the weights
            for name, p in policy.named_parameters():
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    p.mul_(40.0)
        prompts = [TurnPrompt(trajectory=None, index=i, messages=[{"role": "user", "content": c}], reference="",
                              system="") for i, c in enumerate(["ls", "cat a long file name here"])]
        # The engine starts on the *base* weights; sample() must sync the policy's in first.
        sampler = VLLMSampler(base, tok, seed=0, options={"enforce_eager": True, "dtype": "float32",
                              "max_model_len": 512, "gpu_memory_utilization": 0.15, "max_num_seqs": 8})
        got = sampler.sample(policy, 0, prompts, group_size=2, max_tokens=12, temperature=0.0)
        again = sampler.sample(policy, 0, prompts, group_size=2, max_tokens=12, temperature=0.0)
        want = sample_groups(policy, tok, prompts, group_size=2, max_tokens=12, temperature=0.0)
        print("RESULT " + json.dumps({
            "syncs": sampler.syncs,
            "got": [got.input_ids.tolist(), got.attention_mask.tolist(), got.completion_mask.tolist(), got.texts],
            "want": [want.input_ids.tolist(), want.attention_mask.tolist(), want.completion_mask.tolist(),
                     want.texts],
        }))
        sampler.close()

    if __name__ == "__main__":
        main()
"""


@pytest.mark.slow
def test_vllm_sampler_rollouts_equal_the_policys_own_greedy_rollouts(tmp_path: Path, run_vllm_script) -> None:
    out = run_vllm_script(SAMPLER_SCRIPT, str(tmp_path / "policy"))
    assert out["syncs"] == 1  # synced once for step 0, not again for the second round at the same step
    # Same ids (prompt rendering, padding, completion tokens incl. the stop token), masks and texts.
    assert out["got"] == out["want"]
