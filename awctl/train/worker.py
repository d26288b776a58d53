"""The process a launcher starts: ``python -m awctl.train.worker <launch.json>``.

``launch.json`` holds ``{"stage": kind, "options": {...}, "out": dir, "seed": int}`` as written by
``awctl train``. The worker runs that stage kind with ``out`` as its stage folder (checkpoints in
``out/train``), resuming from the last checkpoint there when ``resume`` is true.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def run_stage(stage: str, options: dict[str, Any], out: Path, seed: int = 0, console: Any = sys.stderr) -> Any:
    from awctl.config import load_project_config
    from awctl.plugins import get_registry
    from awctl.runlog import make_run_logger
    from awctl.stages import StageContext

    cls = get_registry().stage(stage).obj
    opts = cls.Options.model_validate(options)
    out.mkdir(parents=True, exist_ok=True)
    log, sink = make_run_logger(out / "log.jsonl", console, stage=stage)
    try:
        ctx = StageContext(name=stage, run_dir=out, stage_dir=out, project=load_project_config(), recipe={},
                           log=log, seed=seed, _metrics_path=out / "stage_metrics.jsonl")
        return cls(opts).run(ctx)
    finally:
        sink.close()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # The DeepSpeed launcher inserts --local_rank=N before the script's own arguments.
    paths = [a for a in args if not a.startswith("--")]
    spec = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
    result = run_stage(spec["stage"], spec["options"], Path(spec["out"]), int(spec.get("seed", 0)))
    print(json.dumps(result.summary, default=str))


if __name__ == "__main__":
    main()
