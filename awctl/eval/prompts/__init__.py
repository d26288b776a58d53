"""awctl's judge prompts (text files; see :mod:`awctl.eval.llm_judge`)."""
