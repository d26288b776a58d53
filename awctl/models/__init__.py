"""Model-side helpers: tokenizers (local BPE training for tiny models, loading) and, later, backends.

Nothing here imports torch or transformers at module level; import the submodule you need.
"""
