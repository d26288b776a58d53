"""Print the trajectory JSON schema: ``python -m awctl.formats.schema > docs/trajectory.schema.json``.

tests/test_trajectory_io.py fails when the committed file differs from this output.
"""

from __future__ import annotations

import json

from awctl.trajectory import trajectory_json_schema


def schema_text() -> str:
    """The schema exactly as committed in docs/trajectory.schema.json (2-space indent, final newline)."""
    return json.dumps(trajectory_json_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    import sys

    sys.stdout.write(schema_text())


if __name__ == "__main__":
    main()
