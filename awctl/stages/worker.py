"""The process a launcher starts: ``python -m awctl.stages.worker <launch.json>``.

``launch.json`` holds ``{"stage": kind, "options": {...}, "out": dir, "seed": int}`` as written by
``awctl train``. The worker runs that stage kind with ``out`` as its stage folder (checkpoints in
``out/train``), resuming from the last checkpoint there when ``resume`` is true.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_standalone

    args = sys.argv[1:] if argv is None else argv
    # The DeepSpeed launcher inserts --local_rank=N before the script's own arguments.
    paths = [a for a in args if not a.startswith("--")]
    spec = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
    result = run_standalone(get_registry(), spec["stage"], spec["options"], Path(spec["out"]),
                            seed=int(spec.get("seed", 0)))
    print(json.dumps(result.summary, default=str))


if __name__ == "__main__":
    main()
