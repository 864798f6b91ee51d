"""Reconciliation rules under the real listener: a job reads orders and customers and writes an
inner join that drops the orders of an unknown customer (FAILS `every_order_kept` with both
counts in the facet) and a left join that keeps them (passes); `references` passes where every
customer is known and fails where one is not. (A Delta input read at an older version is
reconciled at that version in tests/spark/test_reconcile.py: the listener 1.53 sends no event
for a job that reads a Delta table here.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pipeline import HERE, run_with_producer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def reconciled(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("reconcile")
    base = workdir / "reconcile"
    events, _ = run_with_producer(
        spark,
        HERE / "reconcile_contracts",
        "reconcile_job.py",
        [str(base)],
        workdir,
        {"spark.openlineage.namespace": "e2e-reconcile"},
    )
    return {"base": base, "events": events}


def _assertions(events: list[dict[str, Any]], path: Path) -> dict[str, dict[str, Any]]:
    """The assertions of the COMPLETE writing `path` (the last one that carries them)."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if event["eventType"] != "COMPLETE":
            continue
        for dataset in event["outputs"]:
            facet = dataset.get("facets", {}).get("dataQualityAssertions")
            if dataset["name"] == str(path) and facet:
                found = {a["name"]: a for a in facet["assertions"]}
    return found


def test_a_join_that_drops_orders_fails_with_both_counts(reconciled: dict[str, Any]) -> None:
    base = reconciled["base"]
    found = _assertions(reconciled["events"], base / "enriched")
    kept = found["every_order_kept"]
    assert kept["success"] is False and kept["params"]["status"] == "FAILED"
    both = kept["params"]["reconcile"]
    assert both["input"].endswith(str(base / "orders"))
    assert (both["inputValue"], both["outputValue"]) == (10, 8)  # 2 orders of customer 3 lost
    assert found["amount_kept"]["success"] is False  # 45 read, 35 written
    assert found["customers_known"]["success"] is True  # the inner join kept known ones only


def test_the_same_job_without_the_bug_passes(reconciled: dict[str, Any]) -> None:
    base = reconciled["base"]
    found = _assertions(reconciled["events"], base / "enriched_fixed")
    assert found["every_order_kept"]["success"] is True
    assert found["every_order_kept"]["params"]["reconcile"]["outputValue"] == 10
    assert found["amount_kept"]["success"] is True
    known = found["customers_known"]  # customer 3 is nobody's: one value not found
    assert known["success"] is False and known["params"]["reconcile"]["missing"] == 1
