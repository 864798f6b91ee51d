"""`lineage-quality gate --dataset NAME|PATH` (issue 39) on a SQLite history store written as
serve writes it (observe + LineageStore): 1 while the latest write failed a BLOCK rule, 0 once
a healthy write is evaluated, 2 for a dataset never evaluated or a store that is not there; one
line, or one JSON object; the store is only read."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli.main import main
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Upstream, observe, open_lineage
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of

ROWS = Rule(
    id="raw.rows",
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    name="raw_not_empty",
    action="BLOCK",
)
NOW = int(time.time() * 1000)


def _complete(run: str, at: int, inputs: list[str], output: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at / 1000)),
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": run},
        "inputs": [{"namespace": "file", "name": n} for n in inputs],
        "outputs": [{"namespace": "file", "name": output}],
    }


def _keep(where: Path, event: dict[str, Any], rows: int | None = None) -> None:
    store = open_lineage(where)
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    results = {} if rows is None else {out: [verdict(ROWS, rows, rows)]}
    store.record(observe(event, results, store.written, Upstream.WARN))
    store.close()


def _gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["gate", *args])
    return code, capsys.readouterr().out


def test_gate_dataset_exits_1_then_0_after_the_fix_and_2_when_never_evaluated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "history.db"
    history = ["--history", str(where)]
    code, out = _gate(capsys, "--dataset", "/lake/raw", *history)
    assert code == 2 and "no history store at" in out  # cannot tell: never a pass

    _keep(where, _complete("raw-1", NOW - 120_000, [], "/lake/raw"), rows=0)  # empty: BLOCK
    _keep(where, _complete("clean-1", NOW - 60_000, ["/lake/raw"], "/lake/clean"))
    before = where.read_bytes()
    code, out = _gate(capsys, "--dataset", "/lake/raw", *history)
    assert code == 1
    assert out.count("\n") == 1 and out.startswith(
        "file:/lake/raw: BLOCK: rule raw_not_empty FAILED (BLOCK) [write of run raw-1 at "
    )
    assert where.read_bytes() == before  # only read

    # clean has no contract: written and marked (warn), never evaluated
    code, out = _gate(capsys, "--dataset", "file:/lake/clean", *history)
    assert code == 2
    assert "latest write not evaluated" in out and "marked: upstream file:/lake/raw" in out
    code, out = _gate(capsys, "--dataset", "/lake/never", *history)
    assert (code, out) == (2, "/lake/never: never evaluated (no write of it is known)\n")

    _keep(where, _complete("raw-2", NOW - 1000, [], "/lake/raw"), rows=5)
    code, out = _gate(capsys, "--dataset", "/lake/raw", *history, "--output", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "healthy" and doc["exit"] == 0
    assert doc["write"]["run"] == "raw-2" and doc["failures"] == []


def test_a_name_meaning_two_datasets_is_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "history.db"
    for ns, run in (("file", "a"), ("hdfs://nn", "b")):
        event = _complete(run, NOW - 1000, [], "raw")
        event["outputs"][0]["namespace"] = ns
        _keep(where, event, rows=5)
    code, out = _gate(capsys, "--dataset", "raw", "--history", str(where))
    assert code == 2 and "names 2 datasets (file:raw, hdfs://nn:raw)" in out
    code, out = _gate(capsys, "--dataset", "hdfs://nn:raw", "--history", str(where))
    assert code == 0


def test_gate_needs_a_run_or_a_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["gate"])
    assert exit_.value.code == 2
    assert "one of the arguments --run-id --dataset is required" in capsys.readouterr().err
