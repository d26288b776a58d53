"""Recipes: TOML files that name a run's stages, validated without running (or importing) anything heavy.

A recipe has a ``[recipe]`` table (``name``, ``description``, ``seed``, optional ``output_root``), optional
project-level tables that override awctl.toml for this recipe (``[defaults]``, ``[domains.<name>]``), and an
ordered array ``[[stages]]``. Each stage has ``kind`` (a kind registered through ``register_stages``), an
optional unique ``name`` (default: the kind) and its options as the remaining keys::

    [recipe]
    name = "quickstart"
    seed = 0

    [[stages]]
    kind = "record"
    domains = ["terminal"]

    [[stages]]
    kind = "verify"
    input = "@record.trajectories"      # an earlier stage's output

``key.path=value`` overrides (``recipe.seed=3``, ``stages.prep.max_turns=10`` by stage name,
``stages.0.kind=record`` by index) are applied before validation; the value is read as a TOML value when
it parses as one, else taken as a string.

:func:`validate_recipe` returns every problem at once, each as ``file: key: message (fix)``, where
``key`` uses the same dotted path an override would. It imports stage classes through the plugin
registry but never runs them, so it must stay torch-free (a test checks).
"""

from awctl.recipe.find import RECIPES_DIR, find_recipe, recipe_dirs, shipped_dir, shipped_recipes
from awctl.recipe.overrides import apply_overrides, is_override, parse_override
from awctl.recipe.spec import (
    STAGE_RESERVED,
    TOP_LEVEL_KEYS,
    RecipeMeta,
    ResolvedRecipe,
    StageSpec,
    dump_toml,
    references_in,
)
from awctl.recipe.validate import load_recipe, load_recipe_data, validate_recipe

__all__ = [
    "RECIPES_DIR",
    "STAGE_RESERVED",
    "TOP_LEVEL_KEYS",
    "RecipeMeta",
    "ResolvedRecipe",
    "StageSpec",
    "apply_overrides",
    "dump_toml",
    "find_recipe",
    "is_override",
    "load_recipe",
    "load_recipe_data",
    "parse_override",
    "recipe_dirs",
    "references_in",
    "shipped_dir",
    "shipped_recipes",
    "validate_recipe",
]
