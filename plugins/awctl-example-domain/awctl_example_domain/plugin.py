"""Entry point named in pyproject.toml: registers the domain through the public hook."""

from awctl.hookspecs import hookimpl
from awctl_example_domain.domain import CalcDomain


@hookimpl
def register_domains(register):
    register(CalcDomain())
