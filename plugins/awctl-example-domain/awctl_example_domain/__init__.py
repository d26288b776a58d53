"""Example third-party awctl domain: a calculator REPL with variables."""
