"""The ``swe`` domain: a git repository at /testbed, SWE-agent's str_replace_editor and a bash shell."""
