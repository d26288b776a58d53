"""The agent policy: a causal LM acting through a domain's action codec, token in and token out.

**Chat layout** (as :class:`awctl.record.BackendPolicy`): the system message states the task and the
domain's action space (:data:`awctl.record.AGENT_SYSTEM`), each observation is a user message and each
action an assistant message; an empty action ends the episode. The first prompt is the model's chat
template over ``[system, first observation]`` with the generation prompt. After an action, the tokens
appended are the template's text between an assistant message and the next generation prompt with the
observation inside, tokenized piece by piece (:meth:`AgentPolicy.observation_ids`). The token ids a
sampler returns are appended as they are: nothing is ever re-tokenized, so the sequence the update
trains on is the one the policy produced and saw.

**Samplers** take token-id prompts and return ``(ids, logprobs, text)`` per prompt:

* :class:`TransformersSampler` decodes with the KV cache, a seeded generator per row (one episode's
  sampling does not depend on which other episodes share the batch), temperature and top-p. The log-prob
  kept for each sampled token is ``log_softmax(logits / temperature)`` at that token (``temperature = 0``:
  greedy, with the plain ``log_softmax``), which is what the update recomputes, so the GSPO ratio compares
  like with like (top-p truncation is not renormalised on either side).
* :class:`VLLMSampler` (GPU recipes) sends the token ids to a colocated vLLM engine kept in sync with the
  policy's weights; its log-probs come from other kernels, so the update recomputes the old log-probs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from awctl.domain import Domain, Task
from awctl.record import AGENT_SYSTEM
from awctl.rl.vllm_sync import WeightSynced

_A, _O = "AWCTLAGENTACTIONSENTINEL", "AWCTLAGENTOBSERVATIONSENTINEL"


@dataclass
class Sample:
    """One sampled action: ``ids`` (the stop token included when one was produced), the log-prob of each,
    the decoded ``text`` (stop token and special tokens left out) and whether a stop token ended it."""

    ids: list[int]
    logprobs: list[float]
    text: str
    stopped: bool


class Sampler(Protocol):
    """Anything that samples a continuation of each token-id prompt with its own seed."""

    kind: str

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Sample]: ...


class AgentPolicy:
    """A causal LM as an agent for ``domain``. ``sampler`` defaults to a :class:`TransformersSampler` over
    ``model``; ``max_action_tokens`` bounds one action; ``max_observation_tokens`` keeps the head and the
    tail of a longer observation (``None``: keep all)."""

    def __init__(self, model: Any, tokenizer: Any, domain: Domain, *, max_action_tokens: int = 128,
                 temperature: float = 1.0, top_p: float = 1.0, max_observation_tokens: int | None = None,
                 sampler: Sampler | None = None) -> None:
        from awctl.models.backends.common import stop_token_ids

        self.model, self.tokenizer, self.domain = model, tokenizer, domain
        self.max_action_tokens, self.temperature, self.top_p = max_action_tokens, temperature, top_p
        self.max_observation_tokens = max_observation_tokens
        self.stop_ids = stop_token_ids(tokenizer, getattr(model, "generation_config", None))
        if not self.stop_ids:
            from awctl.errors import AwctlError

            raise AwctlError("the policy's tokenizer has no end-of-turn token", hint="use a chat/instruct model")
        self.sampler: Sampler = sampler or TransformersSampler(model, tokenizer, self.stop_ids,
                                                               max_new_tokens=max_action_tokens,
                                                               temperature=temperature, top_p=top_p)
        # The longest sequence the model takes (its position embeddings); the engine ends an episode
        # (``max_tokens``) before its next prompt and action would pass it.
        self.context_limit: int | None = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        self._layout()

    # ── chat layout ──
    def system_text(self, task: Task) -> str:
        return AGENT_SYSTEM.format(domain=self.domain.name, instruction=task.instruction,
                                   action_space=self.domain.action_codec.schema())

    def _template(self, messages: list[dict[str, str]], generation: bool) -> str:
        from awctl.models.backends.common import render_chat

        if generation:
            return render_chat(self.tokenizer, messages)
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)

    def _layout(self) -> None:
        """Find the template's text between an assistant message and the next generation prompt."""
        full = self._template([{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                               {"role": "assistant", "content": _A}, {"role": "user", "content": _O}], True)
        if _A not in full or _O not in full:
            from awctl.errors import AwctlError

            raise AwctlError("the policy's chat template drops message contents",
                             hint="use a model whose chat template renders system, user and assistant turns")
        a, o = full.index(_A) + len(_A), full.index(_O)
        between, self._after = full[a:o], full[o + len(_O):]
        ends = sorted({self.tokenizer.convert_ids_to_tokens(i) for i in self.stop_ids} - {None}, key=len,
                      reverse=True)
        self._end_text = next((e for e in ends if between.startswith(e)), "")
        self._between = between
        # The end-of-turn id the template closes an assistant message with (for actions cut at max tokens).
        self._end_ids = self._encode(self._end_text) if self._end_text else []

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def start(self, task: Task, first_observation: str) -> list[int]:
        """The prompt ids of an episode: system (task + action space) and the first observation."""
        text = self._template([{"role": "system", "content": self.system_text(task)},
                               {"role": "user", "content": first_observation}], True)
        return self._encode(text)

    def observation_ids(self, observation: str, *, stopped: bool = True) -> list[int]:
        """The ids appended after an action: the end of the assistant turn (its end-of-turn token only when
        the action did not already end with one, ``stopped=False``), the observation as a user message, and
        the next generation prompt."""
        head = self._between[len(self._end_text):] if stopped else self._between
        ids = self._encode(head)
        body = self._encode(observation)
        cap = self.max_observation_tokens
        if cap is not None and len(body) > cap:
            mark = self._encode("\n[...]\n")
            keep = max(0, cap - len(mark))
            body = body[: keep // 2] + mark + body[len(body) - (keep - keep // 2):]
        return ids + body + self._encode(self._after)

    def closing_ids(self, stopped: bool) -> list[int]:
        """What closes the final action of an episode: nothing after a stop token, else the end-of-turn."""
        return [] if stopped else list(self._end_ids)

    def action_ids(self, action: str) -> list[int]:
        """The ids of a given action text ending with the end-of-turn token (behaviour cloning's targets)."""
        return self._encode(action) + (list(self._end_ids) or [self.stop_ids[0]])

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Sample]:
        """One action per prompt (see the module docstring)."""
        return self.sampler.sample(prompts, seeds)


class TransformersSampler:
    """Batched sampling from a transformers causal LM with the KV cache (see the module docstring)."""

    kind = "transformers"

    def __init__(self, model: Any, tokenizer: Any, stop_ids: list[int], *, max_new_tokens: int = 128,
                 temperature: float = 1.0, top_p: float = 1.0) -> None:
        self.model, self.tokenizer, self.stop_ids = model, tokenizer, list(stop_ids)
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Sample]:
        import torch

        if not prompts:
            return []
        model = self.model
        device = next(model.parameters()).device
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.stop_ids[0]
        width = max(len(p) for p in prompts)
        n = len(prompts)
        ids = torch.full((n, width), pad, dtype=torch.long)
        att = torch.zeros((n, width), dtype=torch.long)
        for i, p in enumerate(prompts):
            ids[i, width - len(p):] = torch.tensor(p, dtype=torch.long)
            att[i, width - len(p):] = 1
        ids, att = ids.to(device), att.to(device)
        pos = (att.cumsum(-1) - 1).clamp(min=0)
        gens = [torch.Generator().manual_seed(int(s) % (2**63)) for s in seeds]
        stops = torch.tensor(self.stop_ids, dtype=torch.long)
        out_ids: list[list[int]] = [[] for _ in range(n)]
        out_lp: list[list[float]] = [[] for _ in range(n)]
        done = [False] * n
        was_training = model.training
        model.eval()
        try:
            from transformers import DynamicCache

            cache = DynamicCache()
            with torch.no_grad():
                logits = model(input_ids=ids, attention_mask=att, position_ids=pos, past_key_values=cache,
                               use_cache=True).logits[:, -1, :]
                last_pos = pos[:, -1]
                for _ in range(self.max_new_tokens):
                    tokens, lps = self._pick(logits.float().cpu(), gens)
                    for i in range(n):
                        if done[i]:
                            continue
                        out_ids[i].append(int(tokens[i]))
                        out_lp[i].append(float(lps[i]))
                        if int(tokens[i]) in self.stop_ids:
                            done[i] = True
                    if all(done):
                        break
                    nxt = torch.where(torch.isin(tokens, stops), torch.tensor(pad), tokens).to(device)
                    att = torch.cat([att, torch.ones((n, 1), dtype=att.dtype, device=device)], 1)
                    last_pos = last_pos + 1
                    logits = model(input_ids=nxt[:, None], attention_mask=att, position_ids=last_pos[:, None],
                                   past_key_values=cache, use_cache=True).logits[:, -1, :]
        finally:
            if was_training:
                model.train()
        result = []
        for i in range(n):
            stopped = bool(out_ids[i]) and out_ids[i][-1] in self.stop_ids
            body = out_ids[i][:-1] if stopped else out_ids[i]
            text = self.tokenizer.decode(body, skip_special_tokens=True)
            result.append(Sample(out_ids[i], out_lp[i], text, stopped))
        return result

    def _pick(self, logits: Any, gens: list[Any]) -> tuple[Any, Any]:
        """Sampled token and its log-prob per row (see the module docstring for which log-prob)."""
        import torch

        if self.temperature <= 0:
            logp = torch.log_softmax(logits, -1)
            tokens = logits.argmax(-1)
            return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)
        scaled = logits / self.temperature
        logp = torch.log_softmax(scaled, -1)
        probs = logp.exp()
        if self.top_p < 1.0:
            sorted_p, order = probs.sort(-1, descending=True)
            drop = sorted_p.cumsum(-1) - sorted_p > self.top_p  # keeps at least the most likely token
            sorted_p = sorted_p.masked_fill(drop, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
        tokens = torch.stack([torch.multinomial(probs[i], 1, generator=g)[0] for i, g in enumerate(gens)])
        return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)


class VLLMSampler(WeightSynced):
    """Agent sampling through an in-process vLLM engine whose weights follow the policy (GPU recipes).

    ``sync(module, step)`` pushes the policy's weights (LoRA merged, as
    :func:`awctl.rl.vllm_sync.policy_weights`) unless they were pushed at optimizer step ``step``; the
    trainer calls it before each rollout. Prompts go in as token ids, one request per prompt with its own
    seed; the returned ids keep the stop token. The log-probs are vLLM's (other kernels and precision), so
    training with this sampler recomputes the old log-probs with the policy (``old_logprobs = "auto"``)."""

    kind = "vllm"

    def __init__(self, model_path: str, tokenizer: Any, stop_ids: list[int], *, max_new_tokens: int = 128,
                 temperature: float = 1.0, top_p: float = 1.0, options: dict[str, Any] | None = None) -> None:
        from awctl.models.backends.vllm_backend import VLLMBackend

        self.tokenizer, self.stop_ids = tokenizer, list(stop_ids)
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.backend = VLLMBackend(model_path, weight_sync=True, **(options or {}))
        self.synced_step: int | None = None
        self.syncs = 0

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Sample]:
        from vllm import SamplingParams

        params = [SamplingParams(n=1, temperature=self.temperature, top_p=self.top_p,
                                 max_tokens=self.max_new_tokens, seed=int(s) % (2**31),
                                 stop_token_ids=self.stop_ids, logprobs=0) for s in seeds]
        with self.backend._lock:
            outputs = self.backend.llm.generate([{"prompt_token_ids": p} for p in prompts], params,
                                                use_tqdm=False)
        result = []
        for out in outputs:
            comp = out.outputs[0]
            toks = list(comp.token_ids)
            lps = [float(step[t].logprob) if step and t in step else 0.0
                   for t, step in zip(toks, comp.logprobs or [{}] * len(toks), strict=False)]
            if comp.finish_reason == "stop" and (not toks or toks[-1] not in self.stop_ids) and \
                    isinstance(comp.stop_reason, int):
                toks.append(comp.stop_reason)  # the policy must learn to emit its stop token
                lps.append(0.0)
            stopped = bool(toks) and toks[-1] in self.stop_ids
            body = toks[:-1] if stopped else toks
            result.append(Sample(toks, lps, self.tokenizer.decode(body, skip_special_tokens=True), stopped))
        return result

    def close(self) -> None:
        self.backend.close()
