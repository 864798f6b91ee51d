"""Verdicts on exactly the data each run wrote (issue 8), under the real listener: a path
overwritten twice, a saveAsTable bound by its catalog name, a failed write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pipeline import HERE, run_with_producer

from lineage_quality.contracts import load_contracts
from lineage_quality.producer import Evaluator

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shapes(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("shapes")
    base = workdir / "shapes"
    reads: list[str] = []  # the name of each dataset the producer's evaluator read
    original = Evaluator.read

    def read(self: Evaluator, ref: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(ref.name)
        return original(self, ref, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Evaluator, "read", read)
        events, evaluator = run_with_producer(
            spark,
            HERE / "shapes_contracts",
            "write_shapes_job.py",
            [str(base)],
            workdir,
            {"spark.openlineage.namespace": "e2e-shapes"},
        )
    return {"base": base, "events": events, "evaluations": evaluator.evaluations, "reads": reads}


def _completes_writing(events: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Its COMPLETE events, in the order the job wrote (runs are forwarded in parallel lanes)."""
    found = [
        e
        for e in events
        if e["eventType"] == "COMPLETE" and any(o["name"] == str(path) for o in e["outputs"])
    ]
    return sorted(found, key=lambda e: e["eventTime"])


def _names_the_change(message: str, event: dict[str, Any]) -> bool:
    """The ERROR names what the run wrote and what was found instead: its rows, its bytes or its
    files (the listing is compared before and after the scan, the rows after it)."""
    stats = (event["outputs"][0].get("outputFacets") or {}).get("outputStatistics")
    if stats is None:
        # The listener sends a write's statistics when Spark's metrics are in by its COMPLETE,
        # not on every timing (issue 44.9): then only the files can say it changed.
        return "changed after the run wrote it" in message
    return (
        "wrote 3 rows, found 20" in message
        or f"wrote {stats['size']} bytes, found" in message
        or f"wrote {stats['fileCount']} file(s), found" in message
    )


def _assertions(event: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    (out,) = [o for o in event["outputs"] if o["name"] == str(path)]
    facet = out["facets"]["dataQualityAssertions"]
    return {a["name"]: a for a in facet["assertions"]}


def test_each_overwrite_is_judged_on_its_own_data(shapes: dict[str, Any]) -> None:
    first, second = _completes_writing(shapes["events"], shapes["base"] / "twice")
    stats = (first["outputs"][0].get("outputFacets") or {}).get("outputStatistics")
    assert stats is None or stats["rowCount"] == 3  # when sent (not on every timing)
    one = _assertions(first, shapes["base"] / "twice")
    # The first run wrote 3 rows, all v null. Evaluated in time: its own numbers; evaluated
    # after the second write: an ERROR saying so. Never the second write's 20 rows.
    if one["twice_rows"]["params"]["status"] == "ERROR":
        for a in one.values():
            assert a["params"]["status"] == "ERROR" and a["success"] is False
            assert "dataset changed after the run wrote it" in a["params"]["error"]
            assert _names_the_change(a["params"]["error"], first)
    else:
        assert one["twice_rows"]["actual"] == "3"
        assert one["twice_v_not_null"]["actual"] == "3"
    two = _assertions(second, shapes["base"] / "twice")
    assert two["twice_rows"]["actual"] == "20" and two["twice_rows"]["success"] is True
    assert two["twice_v_not_null"]["actual"] == "0" and two["twice_v_not_null"]["success"]


def test_overwrite_after_the_run_is_reported_as_changed(
    shapes: dict[str, Any], spark: Any, tmp_path: Path
) -> None:
    """The same first COMPLETE, evaluated again now: the data is the second write's, so the
    answer must be the ERROR (deterministic, whatever the timing above was)."""
    first, _ = _completes_writing(shapes["events"], shapes["base"] / "twice")
    evaluator = Evaluator(load_contracts([HERE / "shapes_contracts"]), spark=spark)
    (results,) = evaluator.evaluate(first).values()
    assert {r.status.value for r in results} == {"ERROR"}
    assert all(_names_the_change(r.message or "", first) for r in results)


def test_save_as_table_is_bound_by_name_and_evaluated_once(shapes: dict[str, Any]) -> None:
    table_path = shapes["base"] / "warehouse" / "shapes_table"
    completes = _completes_writing(shapes["events"], table_path)
    assert len(completes) == 2  # the listener's CTAS and insert runs
    with_facet = [e for e in completes if "dataQualityAssertions" in e["outputs"][0]["facets"]]
    # Bound by `spark_catalog.default.shapes_table`: the event whose output carries that table
    # identity (the `symlinks` facet) gets the verdict, computed on the table's 5 rows.
    assert len(with_facet) >= 1
    for event in with_facet:
        rows = _assertions(event, table_path)["table_rows"]
        assert rows["success"] is True and rows["actual"] == "5"
    # Every bound dataset of the job was read once per write: the table once (not once per
    # COMPLETE), `twice` once per write. The first write of `twice` is not read when its
    # evaluation found, before reading, that the second write had replaced it (an ERROR without
    # a read); whether it is depends on the timing, so only then may `twice` be read once.
    reads = shapes["reads"]
    assert reads.count(str(table_path)) == 1
    first, _ = _completes_writing(shapes["events"], shapes["base"] / "twice")
    in_time = _assertions(first, shapes["base"] / "twice")["twice_rows"]["params"]["status"] != (
        "ERROR"
    )
    assert reads.count(str(shapes["base"] / "twice")) in ((2,) if in_time else (1, 2))
    assert shapes["evaluations"] == len(reads)


def test_a_failed_write_is_not_evaluated_and_says_so(shapes: dict[str, Any]) -> None:
    failed = shapes["base"] / "failed"
    events = [e for e in shapes["events"] if any(o["name"] == str(failed) for o in e["outputs"])]
    assert [e["eventType"] for e in events if e["eventType"] in ("FAIL", "COMPLETE")] == [
        "FAIL",
        "COMPLETE",
    ]
    (complete,) = [e for e in events if e["eventType"] == "COMPLETE"]
    (out,) = complete["outputs"]
    assert "dataQualityAssertions" not in out.get("facets", {})  # no bogus "cannot read" ERROR
    tests = complete["run"]["facets"]["test"]["tests"]
    assert [(t["name"], t["status"]) for t in tests] == [("failed_rows", "skip")]
    assert tests[0]["params"]["skipReason"] == "RUN_FAILED"
    assert "the run failed" in tests[0]["params"]["message"]
