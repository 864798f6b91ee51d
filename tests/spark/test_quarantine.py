"""QUARANTINE on real Spark: the rows written aside are exactly the rows the verdict counted."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.bounds import QuarantineBounds
from lineage_quality.engine.quarantine import (
    RULE_ID_COLUMN,
    QuarantineConfig,
    quarantine_failures,
)
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.facets.assertions import assertion, to_json_dict
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

ZERO = Threshold(Operator.MUST_BE, 0)
RUN = str(uuid.uuid4())
ROWS = [
    (1, "open", 5.0),
    (2, "OPEN", -1.0),
    (3, None, 200.0),
    (4, "closed", float("nan")),
    (5, "bogus", None),
    (6, "open", 7.0),
]


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, "id INT, status STRING, amount DOUBLE")


def rule(rule_id: str, kind: RuleKind, *cols: str, action: str = "QUARANTINE", **kw: Any) -> Rule:
    kw.setdefault("threshold", ZERO)
    return Rule(id=rule_id, kind=kind, columns=cols, action=action, **kw)


def ids_at(spark: Any, path: str) -> list[int]:
    return sorted(r["id"] for r in spark.read.parquet(path).collect())


def test_failing_rows_of_each_failed_quarantine_rule_land_under_the_run_id(
    spark: Any, df: Any, tmp_path: Path
) -> None:
    rules = [
        rule("status_valid", RuleKind.INVALID_VALUES, "status", valid_values=["open", "closed"]),
        rule("status_not_null", RuleKind.NULL_VALUES, "status"),
        rule("amount_range", RuleKind.VALUE_RANGE, "amount", min_value=0, max_value=100),
        rule("id_pattern", RuleKind.INVALID_VALUES, "id", pattern="^[0-9]$"),  # passes
        rule("status_logged", RuleKind.NULL_VALUES, "status", action="LOG"),  # fails, LOG
        rule("rows", RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 99)),
    ]
    config = QuarantineConfig(str(tmp_path / "q"))
    results = quarantine_failures(
        df, evaluate_dataframe(df, rules), config, RUN, "file:/data/orders"
    )
    by_id = {r.rule.id: r for r in results}
    base = tmp_path / "q" / f"run_id={RUN}" / "dataset=file%3A%2Fdata%2Forders"

    expected = {"status_valid": [2, 5], "status_not_null": [3], "amount_range": [2, 3, 4]}
    for rule_id, ids in expected.items():
        result = by_id[rule_id]
        assert result.status is Status.FAILED and result.failing_rows == len(ids)
        assert result.quarantine is not None
        assert result.quarantine.path == str(base / f"rule_id={rule_id}")
        assert result.quarantine.rows == len(ids)
        assert ids_at(spark, result.quarantine.path) == ids
        written = spark.read.parquet(result.quarantine.path)
        assert {r[RULE_ID_COLUMN] for r in written.collect()} == {rule_id}
        assert written.columns == ["id", "status", "amount", RULE_ID_COLUMN]

    # A passing rule, a failing LOG rule and a rule with no per-row predicate write nothing.
    assert by_id["id_pattern"].status is Status.PASSED
    assert by_id["status_logged"].status is Status.FAILED
    assert by_id["rows"].status is Status.FAILED
    for rule_id in ("id_pattern", "status_logged", "rows"):
        assert by_id[rule_id].quarantine is None
    assert sorted(p.name for p in base.iterdir()) == sorted(f"rule_id={k}" for k in expected)

    # The facet says where and how many.
    params = to_json_dict(assertion(by_id["amount_range"]))["params"]
    assert params["quarantine"] == {"path": str(base / "rule_id=amount_range"), "rows": 3}
    assert params["action"] == "QUARANTINE"


def test_rows_per_rule_are_bounded(spark: Any, df: Any, tmp_path: Path) -> None:
    bad = rule("status_open", RuleKind.INVALID_VALUES, "status", valid_values=["nothing"])
    (result,) = quarantine_failures(
        df, evaluate_dataframe(df, [bad]), QuarantineConfig(str(tmp_path), max_rows=2), RUN, "d"
    )
    assert result.failing_rows == 5
    assert result.quarantine is not None and result.quarantine.rows == 2
    assert len(ids_at(spark, result.quarantine.path)) == 2


def test_a_run_id_that_is_not_a_uuid_never_names_a_folder(df: Any, tmp_path: Path) -> None:
    bad = rule("status_not_null", RuleKind.NULL_VALUES, "status")
    (result,) = quarantine_failures(
        df, evaluate_dataframe(df, [bad]), QuarantineConfig(str(tmp_path)), "../../etc", "d"
    )
    assert result.status is Status.FAILED and result.quarantine is None
    assert list(tmp_path.iterdir()) == []


def test_max_rows_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        QuarantineConfig("/tmp/q", max_rows=0)


def test_the_quarantine_stays_within_its_size_bound(spark: Any, df: Any, tmp_path: Path) -> None:
    """Issue 27.4: each (replayed) run id writes a folder; past the bound the oldest expire, and
    rows that alone would pass it are not kept (their result says so)."""
    rules = [rule("status_valid", RuleKind.INVALID_VALUES, "status", valid_values=["open"])]
    results = evaluate_dataframe(df, rules)
    location = tmp_path / "q"

    def run_folders() -> set[str]:
        return {p.name for p in location.iterdir() if p.name.startswith("run_id=")}

    def quarantine(run: str, max_bytes: int) -> Any:
        config = QuarantineConfig(str(location), bounds=QuarantineBounds(max_bytes=max_bytes))
        (result,) = quarantine_failures(df, results, config, run, "file:/data/orders")
        return result.quarantine

    first, second, third = (str(uuid.uuid4()) for _ in range(3))
    assert quarantine(first, 10**9).rows == 3
    one_run = sum(p.stat().st_size for p in location.rglob("*") if p.is_file())
    assert quarantine(second, one_run + one_run // 2).rows == 3
    assert run_folders() == {f"run_id={second}"}  # the older run expired
    refused = quarantine(third, 10)
    assert refused.rows is None and "bound of 10 bytes" in refused.error
    assert not list((location / f"run_id={third}").rglob("*.parquet"))
    assert f"run_id={second}" in run_folders()  # nothing expired for rows not kept
