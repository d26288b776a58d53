"""awctl's GSPO loss agrees with TRL's GRPOTrainer loss (importance_sampling_level="sequence").

TRL's own ``GRPOTrainer._compute_loss`` runs on a minimal trainer object: only its log-prob function is
replaced, to return the same per-token log-probs awctl sees, so every line of TRL's loss computation
(ratio, clipping, KL, aggregation) is TRL's.
"""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

from awctl.train.losses import group_advantages, gspo_loss  # noqa: E402


def _trl_loss(logps, old, adv, mask, *, eps_low, eps_high, beta, ref=None):
    trl_grpo = pytest.importorskip("trl.trainer.grpo_trainer")
    B, T = logps.shape

    def fake_logps(self, model, input_ids, attention_mask, logits_to_keep, **kwargs):
        return logps, torch.zeros_like(logps), None

    acc = types.SimpleNamespace(reduce=lambda t, reduction="sum": t, gather=lambda t: t,
                                gather_for_metrics=lambda t: t, num_processes=1)
    self = types.SimpleNamespace(
        _get_per_token_logps_and_entropies=types.MethodType(fake_logps, object()),
        top_entropy_quantile=1.0, off_policy_mask_threshold=None, importance_sampling_level="sequence",
        beta=beta, loss_type="grpo", epsilon_low=eps_low, epsilon_high=eps_high, use_vllm=False,
        vllm_importance_sampling_correction=False, model=types.SimpleNamespace(training=True),
        current_gradient_accumulation_steps=1, _entropy_bonus_enabled=False, aux_loss_enabled=False,
        _metrics={"train": __import__("collections").defaultdict(list)}, accelerator=acc,
        args=types.SimpleNamespace(use_bias_correction_kl=False, delta=None),
    )
    inputs = {
        "prompt_ids": torch.zeros(B, 2, dtype=torch.long), "prompt_mask": torch.ones(B, 2, dtype=torch.long),
        "completion_ids": torch.zeros(B, T, dtype=torch.long), "completion_mask": mask.long(),
        "advantages": adv, "old_per_token_logps": old,
    }
    if ref is not None:
        inputs["ref_per_token_logps"] = ref
    return trl_grpo.GRPOTrainer._compute_loss(self, None, inputs)


@pytest.mark.slow  # importing TRL takes ~15 s on 2 cores
@pytest.mark.parametrize("beta", [0.0, 0.04])
@pytest.mark.parametrize("eps", [(3e-4, 4e-4), (0.2, 0.28)])
def test_gspo_loss_and_gradient_match_trl(beta: float, eps: tuple[float, float]) -> None:
    g = torch.Generator().manual_seed(7)
    B, T, G = 8, 13, 4
    base = -torch.rand(B, T, generator=g) * 3
    old = base + 0.05 * torch.randn(B, T, generator=g)  # behaviour policy close to the current one
    ref = base + 0.1 * torch.randn(B, T, generator=g)
    lengths = torch.tensor([13, 5, 9, 1, 13, 7, 2, 11])
    mask = (torch.arange(T)[None] < lengths[:, None]).float()
    adv = group_advantages(torch.rand(B, generator=g), G)
    ours_in = base.clone().requires_grad_(True)
    theirs_in = base.clone().requires_grad_(True)
    ours, _ = gspo_loss(ours_in, old, adv, mask, eps_low=eps[0], eps_high=eps[1], beta=beta,
                        ref_logps=ref if beta else None)
    theirs = _trl_loss(theirs_in, old, adv, mask, eps_low=eps[0], eps_high=eps[1], beta=beta,
                       ref=ref if beta else None)
    ours.backward()
    theirs.backward()
    assert abs(ours.item() - theirs.item()) < 1e-5
    assert torch.allclose(ours_in.grad, theirs_in.grad, atol=1e-5)
    # The clipping branch is exercised, not just the identity ratio.
    assert ours_in.grad.abs().sum() > 0


def test_gspo_clipping_stops_gradient_past_the_trust_region() -> None:
    logps = torch.zeros(2, 3, requires_grad=True)
    old = torch.full((2, 3), -1.0)  # ratio e ≫ 1 + eps_high
    adv = torch.tensor([1.0, -1.0])
    loss, stats = gspo_loss(logps, old, adv, torch.ones(2, 3), eps_low=0.2, eps_high=0.2)
    loss.backward()
    # Positive advantage past 1+eps: clipped, no gradient; negative advantage: min picks the unclipped term.
    assert torch.all(logps.grad[0] == 0)
    assert torch.all(logps.grad[1] != 0)
    assert stats.clip_fraction == 0.5


def test_group_advantages_are_zero_mean_per_group() -> None:
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5])
    a = group_advantages(r, 4)
    assert torch.allclose(a.view(2, 4).sum(1), torch.zeros(2), atol=1e-6)
    assert torch.all(a[4:] == 0)  # identical rewards carry no signal
