"""The evaluator refuses to read a bound name whose real path leaves the binding (issue 9.10)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.contracts.binding import BoundRules, DatasetPattern
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

ROWS = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))


def test_link_to_private_data_is_an_error_not_a_read(spark: Any, tmp_path: Path) -> None:
    lake, private = tmp_path / "lake", tmp_path / "private"
    lake.mkdir()
    spark.createDataFrame([(1,), (2,)], "salary INT").write.csv(str(private), header=True)
    spark.createDataFrame([(1,)], "id INT").write.csv(str(lake / "orders"), header=True)
    os.symlink(private, lake / "link")
    binding = BoundRules("c", "o", (DatasetPattern("file", f"{lake}/*"),), (ROWS,))
    evaluator = Evaluator([binding], spark=spark)

    def results(name: str) -> list[Any]:
        event = {
            "eventType": "COMPLETE",
            "run": {"runId": "01939b9e-0000-7000-8000-000000000001"},
            "job": {"namespace": "j", "name": "j"},
            "inputs": [{"namespace": "file", "name": name}],
            "outputs": [],
        }
        (found,) = evaluator.evaluate(event).values()
        return found

    (linked,) = results(f"{lake}/link")
    assert linked.status is Status.ERROR and linked.actual is None
    assert "refused" in (linked.message or "") and str(private) in (linked.message or "")
    (own,) = results(f"{lake}/orders")
    assert own.status is Status.PASSED and own.actual == 1
