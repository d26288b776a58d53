"""Built-in generation backends, registered by name in :mod:`awctl.builtins` (``BACKENDS``).

Each factory imports its heavy library only when called, so listing backends stays torch-free. (The
factories are named ``make_*`` so they never collide with the submodules of the same stem, which Python
binds as package attributes once imported.)

* ``transformers`` — :class:`~awctl.models.backends.transformers_backend.TransformersBackend`
* ``vllm`` — :class:`~awctl.models.backends.vllm_backend.VLLMBackend`
* ``openai`` — :class:`~awctl.models.backends.openai_backend.OpenAIBackend`
"""

from __future__ import annotations

from typing import Any

from awctl.backend import Backend


def make_transformers(**options: Any) -> Backend:
    """Local Hugging Face directory, GGUF file or ``"tiny"``; options as ``TransformersBackend``."""
    from awctl.models.backends.transformers_backend import TransformersBackend

    return TransformersBackend(**options)


def make_vllm(**options: Any) -> Backend:
    """vLLM offline engine with prefix caching; options as ``VLLMBackend``."""
    from awctl.models.backends.vllm_backend import VLLMBackend

    return VLLMBackend(**options)


def make_openai(**options: Any) -> Backend:
    """Any OpenAI-compatible endpoint; options as ``OpenAIBackend`` (``base_url``, ``model``, ...)."""
    from awctl.models.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(**options)
