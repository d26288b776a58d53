"""The domain conformance kit: checks any domain (built-in or a third party's) against the contract."""
