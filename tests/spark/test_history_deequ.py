"""The history rules' verdicts agree with Deequ's anomaly detection strategies on the same series,
where the definitions match (docs/history.md says where they differ): absoluteChange with
AbsoluteChangeStrategy, relativeChange with RelativeRateOfChangeStrategy, stddev with
BatchNormalStrategy on the rule's window. Deequ runs in its own JVM (jvm-config/test-pom.xml)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.history import Point, history_verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

HERE = Path(__file__).resolve().parent
DEEQU = HERE.parents[1] / "jvm-config" / "test-jars" / "deequ-2.0.7-spark-3.5.jar"
DAY = 86_400_000
# Deequ is built for Spark 3.5 / Scala 2.12 only (no Spark 4 release): its JVM runs on that line.
pytestmark = pytest.mark.spark35_only


def _cases() -> list[dict[str, Any]]:
    rng = random.Random(28)
    cases: list[dict[str, Any]] = []
    for _ in range(40):
        base = rng.uniform(50, 5000)
        window = [base * rng.uniform(0.9, 1.1) for _ in range(rng.randint(2, 8))]
        last = base * rng.choice([rng.uniform(0.3, 0.8), rng.uniform(0.95, 1.05), 1.4, 2.0])
        series = [*window, last]
        cases.append({"strategy": "relative", "low": 0.8, "high": 1.25, "series": series})
        cases.append({"strategy": "absolute", "low": -base * 0.1, "high": base * 0.1,
                      "series": series})  # fmt: skip
        cases.append({"strategy": "batchNormal", "low": 3.0, "high": 3.0, "series": series})
    # on the bounds themselves (inclusive in both), and a flat window (sd 0)
    cases.append({"strategy": "relative", "low": 0.5, "high": 2.0, "series": [100, 200]})
    cases.append({"strategy": "absolute", "low": -10, "high": 10, "series": [100, 90]})
    cases.append({"strategy": "batchNormal", "low": 3.0, "high": 3.0, "series": [5, 5, 5, 5]})
    cases.append({"strategy": "batchNormal", "low": 3.0, "high": 3.0, "series": [5, 5, 5, 6]})
    return cases


def _ours(case: dict[str, Any]) -> bool:
    """Whether our history rule FAILs the last value (an anomaly), all earlier values passed."""
    *window, last = case["series"]
    if case["strategy"] == "batchNormal":
        check = {"compare": "stddev", "runs": len(window), "k": case["high"]}
        threshold = Threshold(Operator.GREATER_OR_EQUAL, 0)
    else:
        compare = "relativeChange" if case["strategy"] == "relative" else "absoluteChange"
        check = {"compare": compare}
        threshold = Threshold(Operator.BETWEEN, case["low"], case["high"])
    rule = Rule(
        id="r", kind=RuleKind.STATISTIC, statistic="avg", columns=("x",), threshold=threshold,
        history=parse_history(check),
    )  # fmt: skip
    past = [Point(f"r{i}", i * DAY, v, "PASSED") for i, v in enumerate(window)]
    measured = RuleResult(rule=rule, status=Status.PASSED, actual=last)
    result = history_verdict(measured, past, len(window) * DAY)
    assert result.status in (Status.PASSED, Status.FAILED), result
    return result.status is Status.FAILED


def test_verdicts_agree_with_deequs_strategies(tmp_path: Path) -> None:
    if not DEEQU.is_file():
        pytest.fail(f"{DEEQU} is missing: run `make test-jars`")
    cases = _cases()
    done = subprocess.run(
        [sys.executable, str(HERE / "deequ_anomalies.py"), str(DEEQU)],
        input=json.dumps(cases), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    deequ = json.loads(done.stdout.strip().splitlines()[-1])
    ours = [_ours(case) for case in cases]
    disagree = [(c, d, o) for c, d, o in zip(cases, deequ, ours, strict=True) if d != o]
    assert not disagree, disagree[:5]
    # the cases are not all one answer: both anomalies and normal values were tried
    assert 10 < sum(deequ) < len(deequ) - 10
