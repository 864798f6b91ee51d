"""lineage-quality with its history on: the same evaluation as `ours`, then what the producer does
per dataset when a history is kept (judge_and_record: the history rules' series read, every
measured value written in one SQLite transaction), with one history rule added (the row count
within 3 sd of the last 7 runs). Its verdicts are `ours`'s; the added rule is not reported."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.history import judge_and_record, open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history
from systems import ours

conf = ours.conf
version = ours.version

_STORE = open_history(Path(tempfile.mkdtemp(prefix="lq-bench-history-")) / "history.db")
_USUAL = Rule(
    id="bench_rows_usual",
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    history=parse_history({"compare": "stddev", "runs": 7, "minRuns": 2}),
)
_runs = 0


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    global _runs
    _runs += 1
    results = evaluate_dataframe(df, [*(ours.to_rule(r) for r in rules), _USUAL])
    judged = judge_and_record(
        _STORE, "file:/bench/dataset", f"run-{_runs}", int(time.time() * 1000), results
    )
    out: dict[str, bool | None] = {}
    for result in judged:
        if result.rule.id == _USUAL.id:
            continue
        if result.status.name == "ERROR":
            raise RuntimeError(f"{result.rule.id}: {result.message}")
        out[result.rule.id] = result.success
    return out
