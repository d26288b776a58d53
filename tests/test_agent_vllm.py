"""The agent's vLLM sampler (GPU recipes): token-id prompts in, the same greedy ids and log-probs as the
transformers sampler out, and after ``sync`` it follows the policy's new weights. Runs in vLLM's own
environment (``AWCTL_VLLM_PYTHON``, see tests/test_backend_vllm.py) as a subprocess; skips, saying why,
when vLLM is not usable here."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPT = """
    import json, sys

    def main():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from awctl.agent.policy import AgentPolicy, TransformersSampler, VLLMSampler
        from awctl.domain import Task
        from awctl.models.tiny import build_tiny_model, default_tiny_model
        from awctl_domains.terminal.domain import TerminalDomain

        base = str(default_tiny_model())
        model, tok = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32), AutoTokenizer.from_pretrained(base)
        domain = TerminalDomain()
        policy = AgentPolicy(model, tok, domain, max_action_tokens=8, temperature=0.0)
        tasks = domain.tasks("basic")[:3]
        prompts = [policy.start(t, "root@sandbox:/workspace#") for t in tasks]
        vs = VLLMSampler(base, tok, policy.stop_ids, max_new_tokens=8, temperature=0.0,
                         options={"enforce_eager": True, "dtype": "float32", "max_model_len": 1024,
                                  "gpu_memory_utilization": 0.15, "max_num_seqs": 8})
        ours = vs.sample(prompts, [1, 2, 3])
        theirs = policy.sampler.sample(prompts, [1, 2, 3])
        # A policy with other weights: the engine must follow them after sync.
        other = AutoModelForCausalLM.from_pretrained(
            str(build_tiny_model(tok, out_dir=sys.argv[1], seed=1)), dtype=torch.float32)
        with torch.no_grad():
            for name, p in other.named_parameters():
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    p.mul_(40.0)
        synced = vs.sync(other, 1)
        again = vs.sync(other, 1)
        after = vs.sample(prompts, [1, 2, 3])
        expected = TransformersSampler(other, tok, policy.stop_ids, max_new_tokens=8, temperature=0.0).sample(
            prompts, [1, 2, 3])
        vs.close()
        print("RESULT " + json.dumps({
            "vllm": [s.ids for s in ours], "tf": [s.ids for s in theirs],
            "vllm_lp": [s.logprobs for s in ours], "tf_lp": [s.logprobs for s in theirs],
            "synced": synced, "again": again, "after": [s.ids for s in after], "expected": [s.ids for s in expected]}))

    if __name__ == "__main__":
        main()
"""


@pytest.mark.slow
def test_vllm_sampler_matches_transformers_on_token_id_prompts_and_follows_sync(tmp_path: Path,
                                                                                run_vllm_script) -> None:
    out = run_vllm_script(SCRIPT, str(tmp_path / "other"))
    assert out["vllm"] == out["tf"]  # greedy: the same ids from the same token-id prompts
    for a, b in zip(out["vllm_lp"], out["tf_lp"], strict=True):
        assert len(a) == len(b) and all(abs(x - y) < 1e-2 for x, y in zip(a, b, strict=True))
    assert out["synced"] is True and out["again"] is False  # one push per optimizer step
    assert out["after"] == out["expected"] and out["after"] != out["vllm"]


STAGE_SCRIPT = """
    import json, os, sys
    from pathlib import Path

    def main():
        os.environ["AWCTL_PLUGINS_DIR"] = sys.argv[1]
        from awctl.plugins import get_registry
        from awctl.stages.standalone import run_standalone

        out = Path(sys.argv[2])
        result = run_standalone(get_registry(), "agent_train", {
            "domain": "lamps", "policy": "tiny", "tasks": "all", "steps": 3, "group_size": 4, "tasks_per_step": 4,
            "max_action_tokens": 8, "bc": {"steps": 95, "lr": 5e-3}, "optim": {"lr": 2e-3, "min_lr_ratio": 1.0},
            "generation": "vllm", "vllm_options": {"enforce_eager": True, "dtype": "float32", "max_model_len": 1024,
                                                   "gpu_memory_utilization": 0.15, "max_num_seqs": 32}}, out, console=None)
        metrics = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
        print("RESULT " + json.dumps({"summary": result.summary,
                                      "gspo": [m for m in metrics if m.get("phase") == "gspo"]}))

    if __name__ == "__main__":
        main()
"""


@pytest.mark.slow
def test_agent_training_samples_through_vllm_kept_in_sync_with_the_policy(tmp_path: Path, run_vllm_script) -> None:
    lamps = Path(__file__).resolve().parent / "fixtures" / "agent_lamps"
    out = run_vllm_script(STAGE_SCRIPT, str(lamps), str(tmp_path / "run"))
    assert out["summary"]["updates"] >= 1 and len(out["gspo"]) == 3
    # vLLM sampled every step from the policy's current weights: its log-probs of the sampled tokens are the
    # ones the update recomputes (a stale engine would differ by the size of the previous updates).
    assert all(m["logprob_drift"] < 1e-4 for m in out["gspo"]), [m["logprob_drift"] for m in out["gspo"]]
