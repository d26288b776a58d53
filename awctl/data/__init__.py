"""Data preparation: trajectories from any importer or recorder → masked, packed training shards.

The pipeline streams (memory stays flat in the number of input records, apart from the dedupe index):

``ingest`` (files, JSONL / AgentWorldBench / domain importers, gzip and zstd) → ``clean`` (codecs,
verifiers, filters; failures go to a quarantine file, never dropped silently) → ``dedupe`` (exact and
MinHash near-duplicates) → ``split`` (whole sources to one split) → ``masking`` (turn-level
information-theoretic loss masking) → ``chat_tokens`` (chat template, role spans, loss weights) →
``packing`` (fixed-length blocks, attention boundaries) → ``shards`` (safetensors + manifest, merge).
:func:`awctl.data.pipeline.run_prep` runs them all.
"""
