"""Token-in/token-out agent RL: observation tokens carry zero policy-loss weight, and the token ids a
rollout produced and saw are exactly the ids the GSPO update trains on (asserted on the tensors the
model receives). Real tiny model, real in-process environment (tests/fixtures/agent_lamps)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


def _trainer(tmp_path: Path, steps: int = 1):
    from awctl.train.config import TrainSpec
    from awctl.train.loop import Trainer

    spec = TrainSpec(steps=steps, batch_size=3, optim={"lr": 1e-3})
    return Trainer(spec, model_path="tiny", out=tmp_path / "train", seed=0)


def _episodes(lamps, model, tok, *, tasks=2, group=2, seed=0):
    from awctl.agent.envs import real_envs
    from awctl.agent.policy import AgentPolicy
    from awctl.agent.rollout import RolloutEngine

    domain = lamps.Lamps(strict=False)  # the random policy's actions reach the env: observations follow
    policy = AgentPolicy(model, tok, domain, max_action_tokens=5, temperature=1.0)
    engine = RolloutEngine(policy, real_envs(domain), step_timeout_s=10.0, concurrency=4)
    return engine.run(domain.tasks("all")[:tasks], group_size=group, seed=seed), policy, engine


def test_observation_tokens_carry_zero_policy_loss_weight(tmp_path: Path, lamps) -> None:
    from awctl.agent.train import AgentRlSettings, agent_loss, pack_episodes, token_logps

    trainer = _trainer(tmp_path)
    episodes, policy, _ = _episodes(lamps, trainer.engine.module, trainer.tokenizer)
    assert any(t.observation_ids for e in episodes for t in e.turns), "the episodes must have observations"
    batch = pack_episodes(episodes, trainer.tokenizer.pad_token_id)
    # The mask is 1 exactly on the sampled action tokens, wherever they sit in the sequence.
    for i, e in enumerate(episodes):
        pos, expected = len(e.prompt_ids), [0] * len(e.prompt_ids)
        for t in e.turns:
            expected += [1] * len(t.action_ids) + [0] * len(t.observation_ids)
            pos += len(t.action_ids) + len(t.observation_ids)
        assert batch.loss_mask[i, :pos].tolist() == expected and batch.loss_mask[i, pos:].sum() == 0
    logps = token_logps(trainer.model, batch, temperature=1.0)
    logps.retain_grad()
    adv = torch.tensor([1.0, -1.0] * (len(episodes) // 2))
    loss, _ = agent_loss(logps, batch, adv, AgentRlSettings(), old="sampled")
    loss.backward()
    grad = logps.grad  # d loss / d log p(token t+1): one entry per predicted token
    targets_mask = batch.loss_mask[:, 1:]
    assert torch.count_nonzero(grad[targets_mask == 0]) == 0, "a prompt/observation token got policy-loss weight"
    assert torch.count_nonzero(grad[targets_mask == 1]) == int(targets_mask.sum())
    # Whatever the model predicts for a prompt or observation token, the loss is the same.
    with torch.no_grad():
        noisy = logps.detach() + torch.randn_like(logps) * 5 * (targets_mask == 0)
        same, _ = agent_loss(noisy, batch, adv, AgentRlSettings(), old="sampled")
        # One episode's action tokens only: a shift of every episode's would scale each sequence ratio
        # alike, and with advantages that sum to zero the loss would not move (except by rounding).
        first = torch.zeros_like(targets_mask)
        first[0] = 1
        moved = logps.detach() + 0.5 * ((targets_mask == 1) & (first == 1))
        other, _ = agent_loss(moved, batch, adv, AgentRlSettings(eps_low=10.0, eps_high=10.0), old="sampled")
    assert torch.equal(same, loss.detach())
    assert not torch.equal(other, loss.detach())  # (while action tokens do move it)


def test_rollout_token_ids_are_the_ids_the_update_trains_on(tmp_path: Path, lamps) -> None:
    from awctl.agent.envs import real_envs
    from awctl.agent.policy import AgentPolicy
    from awctl.agent.rollout import RolloutEngine
    from awctl.agent.train import AgentRlSettings, fit_agent

    trainer = _trainer(tmp_path)
    domain = lamps.Lamps(strict=False)
    policy = AgentPolicy(trainer.engine.module, trainer.tokenizer, domain, max_action_tokens=5, temperature=1.0)
    sampled_prompts: list[list[int]] = []
    real_sample = policy.sampler.sample

    def recording_sample(prompts, seeds):
        sampled_prompts.extend(list(p) for p in prompts)
        return real_sample(prompts, seeds)

    policy.sampler.sample = recording_sample  # type: ignore[method-assign]
    engine = RolloutEngine(policy, real_envs(domain), step_timeout_s=10.0, concurrency=4)
    seen_by_model: list[torch.Tensor] = []
    module = trainer.engine.module
    forward = module.forward

    def recording_forward(*args, **kwargs):
        if torch.is_grad_enabled():  # the update's forward (sampling runs under no_grad)
            seen_by_model.append((kwargs["input_ids"].detach().cpu().clone(), kwargs["attention_mask"].detach().cpu()))
        return forward(*args, **kwargs)

    module.forward = recording_forward  # type: ignore[method-assign]
    drawn = []
    settings = AgentRlSettings(group_size=2, tasks_per_step=2, dynamic_sampling=False, micro_batch=8)
    fit_agent(trainer, engine, domain.tasks("all")[:4], settings, on_episodes=lambda step, eps: drawn.extend(eps))
    module.forward = forward
    assert len(drawn) == 4 and len(seen_by_model) == 1
    ids, att = seen_by_model[0]
    assert ids.shape[0] == 4
    for row, episode in enumerate(drawn):
        n = int(att[row].sum())
        # The exact tensor row the model trained on is the episode's token ids, as sampled and seen.
        assert torch.equal(ids[row, :n], torch.tensor(episode.token_ids(), dtype=ids.dtype))
        assert int(att[row, n:].sum()) == 0
        # Each action was sampled from a prompt that is exactly the episode's ids up to that action.
        pos = len(episode.prompt_ids)
        for t in episode.turns:
            assert episode.token_ids()[:pos] in sampled_prompts
            assert episode.token_ids()[pos:pos + len(t.action_ids)] == t.action_ids
            pos += len(t.action_ids) + len(t.observation_ids)
        # The text the environment received is the decoded sampled ids (nothing re-encoded).
        for t in episode.turns:
            body = t.action_ids[:-1] if t.action_ids and t.action_ids[-1] in policy.stop_ids else t.action_ids
            assert t.action_text == trainer.tokenizer.decode(body, skip_special_tokens=True).strip()


def test_sampled_logprobs_match_the_policy_recomputed_on_the_same_tokens(tmp_path: Path, lamps) -> None:
    from awctl.agent.train import pack_episodes, token_logps

    trainer = _trainer(tmp_path)
    episodes, _, _ = _episodes(lamps, trainer.engine.module, trainer.tokenizer, seed=4)
    batch = pack_episodes(episodes, trainer.tokenizer.pad_token_id)
    with torch.no_grad():
        logps = token_logps(trainer.model, batch, temperature=1.0)
    m = batch.loss_mask[:, 1:] == 1
    drift = (logps[m] - batch.old_logps[:, 1:][m]).abs().max()
    assert drift < 1e-4, f"the sampler's log-probs and the update's differ by {drift}"


def test_only_action_positions_go_through_the_lm_head_with_the_same_numbers(tmp_path: Path, lamps) -> None:
    from awctl.agent.bc import bc_loss
    from awctl.agent.train import action_logits, pack_episodes, token_logps

    trainer = _trainer(tmp_path)
    episodes, _, _ = _episodes(lamps, trainer.engine.module, trainer.tokenizer, seed=2)
    batch = pack_episodes(episodes, trainer.tokenizer.pad_token_id)
    m = batch.loss_mask[:, 1:] == 1
    with torch.no_grad():
        full = trainer.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1].float()
        logits, cols = action_logits(trainer.model, batch)
        assert logits.shape[1] == len(cols) < full.shape[1]  # observation/prompt-only positions are skipped
        want = torch.log_softmax(full, -1).gather(-1, batch.input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        got = token_logps(trainer.model, batch, temperature=1.0)
        assert torch.allclose(got[m], want[m], atol=1e-5) and torch.count_nonzero(got[~m.any(0).expand_as(m)]) == 0
        ce = torch.nn.functional.cross_entropy(full.transpose(1, 2), batch.input_ids[:, 1:], reduction="none")
        loss, ce_sum, _ = bc_loss(trainer.model, batch, denom=float(m.sum()))
        assert abs(ce_sum - float(ce[m].sum())) < 1e-3 and abs(float(loss) - float(ce[m].mean())) < 1e-5


def test_behaviour_cloning_episodes_use_the_rollout_layout(tmp_path: Path, lamps) -> None:
    from awctl.agent.bc import record_references, reference_episodes
    from awctl.agent.envs import real_envs
    from awctl.agent.policy import AgentPolicy

    trainer = _trainer(tmp_path)
    domain = lamps.Lamps()
    policy = AgentPolicy(trainer.engine.module, trainer.tokenizer, domain, max_action_tokens=5)
    refs = record_references(real_envs(domain), domain.tasks("all")[:3])
    assert all(r.ok for r in refs) and [r.observations for r in refs][0] == ["tree is now on"]
    episodes = reference_episodes(policy, refs)
    e = episodes[0]
    assert e.prompt_ids == policy.start(refs[0].task, refs[0].initial)
    first, stop = e.turns
    assert trainer.tokenizer.decode(first.action_ids, skip_special_tokens=True) == "turn tree on"
    assert first.action_ids[-1] in policy.stop_ids and stop.stop and stop.action_ids[-1] in policy.stop_ids
    assert first.observation_ids == policy.observation_ids("tree is now on")
    text = trainer.tokenizer.decode(e.token_ids())
    messages = [{"role": "system", "content": policy.system_text(refs[0].task)},
                {"role": "user", "content": refs[0].initial}, {"role": "assistant", "content": "turn tree on"},
                {"role": "user", "content": "tree is now on"}, {"role": "assistant", "content": ""}]
    # The text the chat template writes for this conversation (token boundaries are the rollout's); the
    # episode ends at the final end-of-turn token, before the template's closing newline.
    template = trainer.tokenizer.apply_chat_template(messages, tokenize=False)
    assert template.startswith(text) and template[len(text):].strip() == ""
