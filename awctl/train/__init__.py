"""World-model training: one loop for CPT, SFT and RL (GSPO), checkpoints that resume exactly, launchers.

Modules: :mod:`config` (validated options), :mod:`model` (HF dir / GGUF / tiny random-init, LoRA),
:mod:`data` (packed prep shards in a resumable order), :mod:`losses` (weighted causal LM loss, GSPO),
:mod:`schedule` (warmup + cosine), :mod:`engine` (plain AdamW or DeepSpeed ZeRO behind one interface),
:mod:`checkpoint` (save/resume), :mod:`loop` (the trainer), :mod:`launch` (python/torchrun/deepspeed table).
Nothing here imports torch at module level except the modules that train.
"""
