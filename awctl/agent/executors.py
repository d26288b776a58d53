"""Where the rollout engine's work runs: in this process (the default) or on Ray actors.

An executor offers four things; the rollout engine uses the first, the stage building the run uses the
others to place its parts:

* ``worker(name)`` — a per-episode worker with ``submit(fn, *args) -> Future`` and ``stop()``, running
  that episode's environment calls in order (the engine's driver side: a daemon thread in both
  executors; with Ray the calls it makes are remote);
* ``envs(factory)`` — an environment factory whose environments live where the executor puts them;
* ``world_model(make_backend)`` — one world-model backend shared by every simulator, batching
  concurrent requests (``make_backend`` is a picklable zero-argument callable, e.g.
  ``functools.partial(awctl.plugins.build_backend, "transformers", model=path)``);
* ``sampler(make_sampler)`` — the policy's sampler (``sample(prompts, seeds)``; ``sync(module, step)``
  brings its weights up to the policy's before a rollout).

:class:`InProcessExecutor` (``executor = "in-process"``, the default) keeps everything here: threads for
episodes, the factory as it is, the backend and sampler as built. :class:`RayExecutor` (``executor =
"ray"``) puts environments on ``env_hosts`` threaded Ray actors (each holding a copy of the factory and
the environments made on it), the world model on one async actor whose
:class:`~awctl.sim.batcher.BatchingBackend` gathers the requests of every environment actor into shared
calls, and the sampler on an actor of its own that receives the policy's weights at ``sync``. A user
with a cluster passes ``address`` (or starts Ray with ``ray start``) and adds nodes; the code is the same.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from awctl.backend import Backend, ChatRequest, Completion
from awctl.domain import Task
from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, EnvironmentUnavailable

EXECUTORS = ("in-process", "ray")


class Worker(Protocol):
    def submit(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def stop(self) -> None: ...


class Executor(Protocol):
    """What :class:`~awctl.agent.rollout.RolloutEngine` and the agent stages take (see the module docstring)."""

    name: str

    def worker(self, name: str) -> Worker: ...

    def envs(self, factory: Any) -> Any: ...

    def world_model(self, make_backend: Callable[[], Backend], **batching: Any) -> Backend: ...

    def sampler(self, make_sampler: Callable[[], Any]) -> Any: ...

    def close(self) -> None: ...


def _thread_worker(name: str) -> Worker:
    from awctl.agent.rollout import ThreadWorker

    return ThreadWorker(name)


class InProcessExecutor:
    """Everything in this process: a daemon thread per episode, parts as built (the default)."""

    name = "in-process"

    def worker(self, name: str) -> Worker:
        return _thread_worker(name)

    def envs(self, factory: Any) -> Any:
        return factory

    def world_model(self, make_backend: Callable[[], Backend], **batching: Any) -> Backend:
        """``make_backend()``; :func:`awctl.agent.envs.sim_envs` batches concurrent episodes' requests."""
        return make_backend()

    def sampler(self, make_sampler: Callable[[], Any]) -> Any:
        return make_sampler()

    def close(self) -> None:
        """Nothing to release: the parts belong to whoever built them."""


# ── Ray ──────────────────────────────────────────────────────────────────────────────────────────────
# Actor classes are plain module-level classes (wrapped with ray.remote when used), so worker processes
# import them from awctl instead of receiving pickled code.


class EnvHost:
    """A Ray actor holding one copy of an environment factory and the environments made on it."""

    def __init__(self, factory: Any) -> None:
        import os

        self.factory = factory
        self.envs: dict[str, Environment] = {}
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.made = 0

    def make(self, key: str, task: Task, slot: int) -> int:
        env = self.factory.make(task, slot)
        with self.lock:
            self.envs[key] = env
            self.made += 1
        return self.pid

    def _env(self, key: str) -> Environment:
        with self.lock:
            env = self.envs.get(key)
        if env is None:
            raise AwctlError(f"no environment {key!r} on this host (closed, or never made)")
        return env

    def reset(self, key: str, task: Task | None, seed: int | None) -> str:
        return self._env(key).reset(task, seed)

    def step(self, key: str, action: str) -> StepResult:
        return self._env(key).step(action)

    def call(self, key: str, method: str, *args: Any) -> Any:
        """Another method of the environment (e.g. a hybrid's ``catch_up``); its result must pickle."""
        return getattr(self._env(key), method)(*args)

    def close(self, key: str) -> None:
        with self.lock:
            env = self.envs.pop(key, None)
        if env is not None:
            env.close()

    def set_step(self, step: int) -> None:
        set_step = getattr(self.factory, "set_step", None)
        if set_step is not None:
            set_step(step)

    def stats(self) -> dict[str, Any]:
        stats = getattr(self.factory, "stats", None)
        with self.lock:
            live = len(self.envs)
        return {"pid": self.pid, "made": self.made, "live": live, **(stats() if stats is not None else {})}

    def shutdown(self) -> None:
        with self.lock:
            envs, self.envs = list(self.envs.values()), {}
        for env in envs:
            with contextlib.suppress(Exception):
                env.close()
        close = getattr(self.factory, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


class WorldModelHost:
    """A Ray async actor serving one world-model backend; concurrent ``generate`` calls (from any actor
    or the driver) are gathered into shared backend calls by a BatchingBackend on the actor's loop."""

    def __init__(self, make_backend: Callable[[], Backend], max_batch: int, window_ms: float) -> None:
        from awctl.sim.batcher import BatchingBackend

        self.inner = make_backend()
        self.batching = BatchingBackend(self.inner, max_batch=max_batch, window_ms=window_ms)

    async def describe(self) -> dict[str, str]:
        return {"name": str(getattr(self.inner, "name", "")), "model": str(getattr(self.inner, "model", ""))}

    async def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        return await self.batching.agenerate(requests)

    async def stats(self) -> dict[str, Any]:
        return self.batching.stats.to_dict()

    async def shutdown(self) -> None:
        self.inner.close()


class SamplerHost:
    """A Ray actor running the policy's sampler on its own copy of the policy's weights."""

    def __init__(self, make_sampler: Callable[[], Any]) -> None:
        self.sampler = make_sampler()

    def kind(self) -> str:
        return str(getattr(self.sampler, "kind", "transformers"))

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Any]:
        return self.sampler.sample(prompts, seeds)

    def load_weights(self, named: list[tuple[str, Any]]) -> int:
        """Copy ``named`` tensors (Hugging Face names, as :func:`awctl.rl.vllm_sync.policy_weights`) into the
        sampler's model; a name the model does not have is an error."""
        import torch

        model = self.sampler.model
        params = dict(model.named_parameters())
        unknown = [n for n, _ in named if n not in params]
        if unknown:
            raise AwctlError(f"the sampler's model has no parameter(s) {unknown[:5]}",
                             hint="build the sampler from the same architecture as the trained policy")
        with torch.no_grad():
            for name, tensor in named:
                params[name].copy_(tensor)
        return len(named)

    def shutdown(self) -> None:
        close = getattr(self.sampler, "close", None)
        if close is not None:
            close()


class RayWorldModel(Backend):
    """A backend handle to a :class:`WorldModelHost` actor (picklable: environment actors call it too).
    ``batched_remotely`` tells :class:`awctl.agent.envs.SharedBackend` not to batch again."""

    batched_remotely = True

    def __init__(self, actor: Any, name: str, model: str) -> None:
        self.actor, self.name, self._model = actor, f"ray:{name}", model

    @property
    def model(self) -> str:  # type: ignore[override]
        return self._model

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        import ray

        return ray.get(self.actor.generate.remote(requests))

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        return await self.actor.generate.remote(requests)

    def stats(self) -> dict[str, Any]:
        import ray

        return ray.get(self.actor.stats.remote())

    def close(self) -> None:
        """The actor belongs to the executor (released by its ``close``)."""


class RaySampler:
    """A sampler handle to a :class:`SamplerHost` actor. ``kind`` is the remote sampler's (so the trainer
    treats its log-probs as that sampler's); ``sync(module, step)`` sends ``module``'s weights unless
    they were sent at optimizer step ``step``."""

    def __init__(self, actor: Any, kind: str) -> None:
        self.actor, self.kind = actor, kind
        self.synced_step: int | None = None
        self.syncs = 0

    def sample(self, prompts: list[list[int]], seeds: list[int]) -> list[Any]:
        import ray

        return ray.get(self.actor.sample.remote(prompts, seeds))

    def sync(self, module: Any, step: int) -> bool:
        import ray

        from awctl.rl.vllm_sync import policy_weights

        if self.synced_step == step:
            return False
        named = [(name, t.detach().cpu().contiguous()) for name, t in policy_weights(module)]
        ray.get(self.actor.load_weights.remote(named))
        self.synced_step, self.syncs = step, self.syncs + 1
        return True

    def close(self) -> None:
        """The actor belongs to the executor (released by its ``close``)."""


class RayEnv(Environment):
    """An environment living on an :class:`EnvHost` actor; every call is a remote call."""

    def __init__(self, host: Any, key: str, domain: str, host_pid: int) -> None:
        self.host, self.key, self.domain, self.host_pid = host, key, domain, host_pid
        self._closed = False

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        import ray

        return ray.get(self.host.reset.remote(self.key, task, seed))

    def step(self, action: str) -> StepResult:
        import ray

        return ray.get(self.host.step.remote(self.key, action))

    def call(self, method: str, *args: Any) -> Any:
        """Another method of the remote environment (its result must pickle)."""
        import ray

        return ray.get(self.host.call.remote(self.key, method, *args))

    def close(self) -> None:
        import ray

        if self._closed:
            return
        self._closed = True
        ray.get(self.host.close.remote(self.key))


class RayEnvPool:
    """An environment factory whose environments live on :class:`EnvHost` actors (episode slot ``s`` on
    host ``s % len(hosts)``). ``set_step`` reaches every host's copy of the factory."""

    def __init__(self, factory: Any, hosts: list[Any]) -> None:
        self.factory, self.hosts = factory, hosts
        self.kind = getattr(factory, "kind", "real")
        self.domain_name = getattr(getattr(factory, "domain", None), "name", "")
        self._closed = False

    def make(self, task: Task, slot: int) -> RayEnv:
        import ray

        if self._closed:
            raise AwctlError("this Ray environment pool was closed")
        host = self.hosts[slot % len(self.hosts)]
        key = uuid.uuid4().hex
        pid = ray.get(host.make.remote(key, task, slot))
        return RayEnv(host, key, self.domain_name or task.domain, pid)

    def set_step(self, step: int) -> None:
        import ray

        local = getattr(self.factory, "set_step", None)
        if local is not None:
            local(step)
        ray.get([h.set_step.remote(step) for h in self.hosts])

    def tasks_for(self, step: int, tasks: Iterable[Task]) -> list[Task]:
        tasks_for = getattr(self.factory, "tasks_for", None)
        return tasks_for(step, tasks) if tasks_for is not None else list(tasks)

    def stats(self) -> dict[str, Any]:
        import ray

        return {"hosts": ray.get([h.stats.remote() for h in self.hosts])}

    def close(self) -> None:
        import ray

        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            ray.get([h.shutdown.remote() for h in self.hosts])


def _local_backends(factory: Any) -> list[str]:
    """Backends a factory would carry to another process that should live in a world-model actor."""
    out = []
    for part in (factory, getattr(factory, "sim", None)):
        backend = getattr(part, "backend", None)
        if backend is not None and not getattr(backend, "batched_remotely", False):
            out.append(type(backend).__name__)
    return out


class RayExecutor:
    """Environment pools, the world model and the policy sampler as Ray actors (see the module docstring).

    Connects to ``address`` (``"auto"``: a running cluster) or starts a local Ray with ``num_cpus``
    (bound to 127.0.0.1) unless Ray is already initialised; what it started, :meth:`close` shuts down.
    ``env_hosts`` actors hold the environments, each running up to ``envs_per_host`` calls at once;
    ``*_cpus`` are the Ray CPU reservations of each actor kind."""

    name = "ray"

    def __init__(self, *, address: str | None = None, num_cpus: int | None = None, env_hosts: int = 2,
                 envs_per_host: int = 16, env_host_cpus: float = 0.0, world_model_cpus: float = 1.0,
                 sampler_cpus: float = 1.0, init_options: dict[str, Any] | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise EnvironmentUnavailable("executor = 'ray' needs Ray", hint="pip install 'awctl[ray]'") from None
        if env_hosts < 1 or envs_per_host < 1:
            raise AwctlError(f"env_hosts and envs_per_host must be at least 1, got {env_hosts}, {envs_per_host}")
        self._ray = ray
        self.started = False
        if not ray.is_initialized():
            opts: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                opts.update(num_cpus=num_cpus, _node_ip_address="127.0.0.1")
            else:
                opts["address"] = address
            opts.update(init_options or {})
            ray.init(**opts)
            self.started = True
        self.env_hosts, self.envs_per_host = env_hosts, envs_per_host
        self.env_host_cpus, self.world_model_cpus, self.sampler_cpus = env_host_cpus, world_model_cpus, sampler_cpus
        self._actors: list[Any] = []
        self._pools: list[RayEnvPool] = []

    def worker(self, name: str) -> Worker:
        return _thread_worker(name)

    def envs(self, factory: Any) -> RayEnvPool:
        """``factory`` copied onto ``env_hosts`` actors. A simulator factory must use a world model that
        already lives in an actor (:meth:`world_model`), not a backend in this process."""
        local = _local_backends(factory)
        if local:
            raise AwctlError(f"the simulator's world model ({local[0]}) lives in this process; environment actors "
                             "cannot share it", hint="build it with executor.world_model(make_backend) and pass that "
                                                     "backend to sim_envs")
        remote = self._ray.remote(EnvHost).options(num_cpus=self.env_host_cpus, max_concurrency=self.envs_per_host)
        hosts = [remote.remote(factory) for _ in range(self.env_hosts)]
        self._actors += hosts
        pool = RayEnvPool(factory, hosts)
        self._pools.append(pool)
        return pool

    def world_model(self, make_backend: Callable[[], Backend], *, max_batch: int = 64,
                    window_ms: float = 10.0) -> RayWorldModel:
        """One :class:`WorldModelHost` actor built with ``make_backend()`` there; returns its handle."""
        remote = self._ray.remote(WorldModelHost).options(num_cpus=self.world_model_cpus, max_concurrency=1000)
        actor = remote.remote(make_backend, max_batch, window_ms)
        self._actors.append(actor)
        info = self._ray.get(actor.describe.remote())
        return RayWorldModel(actor, info["name"], info["model"])

    def sampler(self, make_sampler: Callable[[], Any]) -> RaySampler:
        """One :class:`SamplerHost` actor built with ``make_sampler()`` there; returns its handle."""
        remote = self._ray.remote(SamplerHost).options(num_cpus=self.sampler_cpus)
        actor = remote.remote(make_sampler)
        self._actors.append(actor)
        return RaySampler(actor, self._ray.get(actor.kind.remote()))

    def close(self) -> None:
        """Close every pool, end every actor made here, and shut Ray down if this executor started it."""
        ray = self._ray
        for pool in self._pools:
            pool.close()
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.get(actor.shutdown.remote(), timeout=30)
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._actors, self._pools = [], []
        if self.started and ray.is_initialized():
            ray.shutdown()
            self.started = False


def make_executor(name: str = "in-process", **options: Any) -> Any:
    """The executor called ``name`` (``in-process`` | ``ray``) with its ``options``."""
    if name in ("in-process", "threads"):
        if options:
            raise AwctlError(f"the in-process executor takes no options, got {sorted(options)}")
        return InProcessExecutor()
    if name == "ray":
        return RayExecutor(**options)
    raise AwctlError(f"unknown executor {name!r}", hint=f"use one of {', '.join(EXECUTORS)}")
