"""Every evaluation shows the copy baseline beside the model on the same rows, split into turns the
baseline already gets right (silent) and turns with output; resume reuses only what the same settings made."""

from __future__ import annotations

import json
from pathlib import Path

from awctl.backend import ChatRequest, Completion
from awctl.eval.extract import inference_messages
from awctl.eval.pipeline import EvalSettings, backend_identity, evaluate, judge_fingerprint, versus_baseline
from awctl.eval.rows import iter_input_rows, row_key
from awctl.formats.agentworldbench import read_rows, trajectory_to_rows
from awctl.plugins import get_registry

CORPUS = Path(__file__).parent / "foreign" / "terminal" / "debian-root.awb.jsonl"
REG = get_registry()
TERMINAL = REG.domain("terminal")


class ScriptedBackend:
    """Answers each row with a text chosen by the test; counts the requests it saw."""

    name, model = "scripted", "scripted"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.calls = answers, 0

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        self.calls += len(requests)
        return [[Completion(text=self.answers[json.dumps(r.messages)])] for r in requests]

    def close(self) -> None:
        pass

    def __enter__(self) -> ScriptedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _rows() -> list[dict]:
    return list(iter_input_rows([CORPUS], REG.domains))[:40]


def _truth_and_baseline(rows: list[dict]) -> tuple[dict[str, str], dict[str, str | None]]:
    truth, base = {}, {}
    for traj in read_rows(CORPUS, REG.domains):
        for t, row in enumerate(trajectory_to_rows(traj, REG.domains)):
            key = row_key(row)
            truth[key] = traj.turns[t].observation
            base[key] = TERMINAL.copy_baseline(traj, t)
    return truth, base


def _tagged(text: str) -> str:
    return f"<predicted_observation>\n**Environment Observation:**\n{text}\n</predicted_observation>"


def test_model_and_copy_baseline_on_the_same_rows_with_silent_and_output_splits(tmp_path: Path) -> None:
    rows = _rows()
    truth, base = _truth_and_baseline(rows)
    # The "model" knows the truth on even rows and falls back to the copy rule on odd ones.
    answers = {}
    for i, row in enumerate(rows):
        key = row_key(row)
        guess = truth[key] if i % 2 == 0 else (base[key] or "")
        answers[json.dumps(inference_messages(row))] = _tagged(guess)
    judge = REG.build_judge("deterministic")
    result = evaluate(rows, REG.domains, ScriptedBackend(answers), judge, tmp_path, backend_id="b",
                      judge_id=judge_fingerprint("deterministic", {}), settings=EvalSettings(batch_size=16))
    silent = {row_key(r) for r in rows if base[row_key(r)] is not None
              and TERMINAL.observation_codec.normalize(base[row_key(r)])
              == TERMINAL.observation_codec.normalize(truth[row_key(r)])}
    assert 0 < len(silent) < len(rows)
    splits = result["splits"]
    assert splits["silent"]["rows"] == len(silent) and splits["with_output"]["rows"] == len(rows) - len(silent)
    # The baseline is exact on exactly the silent turns; the model on the even rows and the silent odd ones.
    assert result["baseline"]["exact"]["count"] == len(silent)
    assert result["baseline"]["splits"]["with_output"]["exact"] == 0
    expected = sum(1 for i, r in enumerate(rows) if i % 2 == 0 or row_key(r) in silent)
    assert result["exact"]["count"] == expected
    assert result["overall"] > result["baseline"]["overall"]
    # Paired on the same rows: where the model copies it ties the baseline, where it knows the truth it wins.
    vs = result["vs_baseline"]
    assert vs["silent"] == {"rows": len(silent), "mean": 0.0, "low": 0.0, "high": 0.0, "better": 0,
                            "equal": len(silent), "worse": 0}
    out = vs["with_output"]
    assert out["worse"] == 0 and out["better"] + out["equal"] == out["rows"] == len(rows) - len(silent)
    assert 0 < out["low"] <= out["mean"] <= out["high"]
    assert (tmp_path / "baseline.jsonl").is_file() and json.loads((tmp_path / "scores.json").read_text())


def test_resume_reuses_rows_only_when_the_same_settings_made_them(tmp_path: Path) -> None:
    rows = _rows()[:8]
    answers = {json.dumps(inference_messages(r)): _tagged("x") for r in rows}
    judge = REG.build_judge("deterministic")
    backend = ScriptedBackend(answers)
    kw = {"backend_id": "b", "judge_id": judge_fingerprint("deterministic", {})}
    first = evaluate(rows, REG.domains, backend, judge, tmp_path, **kw)
    assert first["reused"] == {"predictions": 0, "judgements": 0} and backend.calls == 8
    again = evaluate(rows, REG.domains, backend, judge, tmp_path, **kw)
    assert again["reused"] == {"predictions": 8, "judgements": 8} and backend.calls == 8
    # Another judge configuration: the predictions are reused, every judgement is made again.
    other = evaluate(rows, REG.domains, backend, judge, tmp_path, backend_id="b",
                     judge_id=judge_fingerprint("deterministic", {"strict": True}))
    assert other["reused"] == {"predictions": 8, "judgements": 0}
    # Other generation settings: predictions are made again too.
    evaluate(rows, REG.domains, backend, judge, tmp_path, backend_id="b", judge_id=kw["judge_id"],
             settings=EvalSettings(temperature=0.0))
    assert backend.calls == 16


def test_a_new_model_s_predictions_are_judged_again(tmp_path: Path) -> None:
    # A retrained checkpoint regenerates the predictions; the judgements of the old ones must not be reused.
    rows = _rows()[:8]
    truth, _ = _truth_and_baseline(rows)
    judge = REG.build_judge("deterministic")
    judge_id = judge_fingerprint("deterministic", {})
    wrong = ScriptedBackend({json.dumps(inference_messages(r)): _tagged("x") for r in rows})
    right = ScriptedBackend({json.dumps(inference_messages(r)): _tagged(truth[row_key(r)]) for r in rows})
    before = evaluate(rows, REG.domains, wrong, judge, tmp_path, backend_id="v1", judge_id=judge_id)
    after = evaluate(rows, REG.domains, right, judge, tmp_path, backend_id="v2", judge_id=judge_id)
    assert after["reused"] == {"predictions": 0, "judgements": 0}
    assert before["exact"]["count"] == 0 and after["exact"]["count"] == 8


def test_a_judgement_is_redone_when_the_reference_changed_under_the_same_id(tmp_path: Path) -> None:
    from awctl.eval.pipeline import judge_file

    rows = _rows()[:4]
    truth, _ = _truth_and_baseline(rows)
    preds = [{**r, "gen": _tagged(truth[row_key(r)])} for r in rows]
    judge, judge_id = REG.build_judge("deterministic"), judge_fingerprint("deterministic", {})
    first = judge_file(preds, tmp_path / "judged.jsonl", judge, judge_id, REG.domains)
    assert [r["total_score"] for r in first.rows] == [5.0] * 4
    # The same answer against a re-recorded reference: only that row is judged again, and it no longer matches.
    t = preds[2]["turn_idx"] - 1
    preds[2] = {**preds[2], "response": [*preds[2]["response"][:t], "**Environment Observation:**\nsomething else"]}
    again = judge_file(preds, tmp_path / "judged.jsonl", judge, judge_id, REG.domains)
    assert (again.reused, again.judged) == (3, 1)
    assert again.rows[-1]["id"] == preds[2]["id"] and again.rows[-1]["total_score"] < 5.0


def test_a_model_retrained_at_the_same_path_is_another_backend(tmp_path: Path) -> None:
    import os

    model = tmp_path / "rl" / "checkpoint"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"weights v1")
    options = {"model": str(model), "device": "cpu"}
    first = backend_identity("transformers", options)
    assert backend_identity("transformers", dict(options)) == first  # same files: the same identity
    (model / "model.safetensors").write_bytes(b"weights v2")  # a rerun stage writes the same path
    os.utime(model / "model.safetensors", ns=(1, 1))
    assert backend_identity("transformers", options) != first
    assert backend_identity("transformers", {"model": "tiny"}) == backend_identity("transformers", {"model": "tiny"})


def test_the_margin_over_the_baseline_comes_with_an_interval_that_holds_zero_for_a_coin_toss() -> None:
    def judged(scores: list[float]) -> list[dict]:
        return [{"task": "terminal", "id": f"r{i}", "turn_idx": 1, "total_score": x, "failed": 0.0}
                for i, x in enumerate(scores)]

    base = judged([3.0] * 20)
    # Better by one judge point (25 points) on every row: the interval is that point.
    sure = versus_baseline(judged([4.0] * 20), base, set())["all"]
    assert (sure["mean"], sure["low"], sure["high"], sure["better"]) == (25.0, 25.0, 25.0, 20)
    # Better on 11 rows, worse on 9: a positive mean the rows cannot tell from chance.
    coin = versus_baseline(judged([4.0] * 11 + [2.0] * 9), base, set())["with_output"]
    assert coin["mean"] == 2.5 and coin["low"] < 0 < coin["high"] and (coin["better"], coin["worse"]) == (11, 9)
    # A row the judge failed on either side is not compared.
    failed = judged([4.0] * 20)
    failed[0]["failed"] = 1.0
    assert versus_baseline(failed, base, set())["all"]["rows"] == 19
