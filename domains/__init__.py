"""awctl's built-in domains. Each subpackage is a domain plugin registered through the public hooks."""
