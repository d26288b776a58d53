"""awctl's shipped recipes, installed as the package data ``awctl_recipes`` (``awctl recipes list``)."""
