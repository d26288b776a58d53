"""The search domain: web_search, web_extractor and memory tools over a local documentation corpus."""
