"""The ``awctl`` command line: one module per command group, imported only when that command runs."""
