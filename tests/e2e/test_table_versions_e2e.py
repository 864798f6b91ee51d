"""Delta Lake and Iceberg outputs are evaluated at the version their run wrote, by time travel,
however late the evaluation (issue 8.1), under the real listener; and a version read by several
queries, unchanged, is evaluated once (issue 51.1): Delta by its version, Parquet by its files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from pipeline import HERE, REPO_ROOT, run_with_producer

from lineage_quality.contracts import load_contracts
from lineage_quality.evaluation.reuse import Reuse
from lineage_quality.evaluation.session import table_format_jars
from lineage_quality.history.store import open_history
from lineage_quality.history.versions import open_version_verdicts
from lineage_quality.producer import Evaluator
from lineage_quality.sparksubmit import listener_jar

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def versions(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("versions")
    base = workdir / "versions"
    reuse = Reuse(open_version_verdicts(workdir / "history.db"))
    history = open_history(workdir / "history.db")
    jars = ",".join(str(j) for j in [listener_jar(REPO_ROOT), *table_format_jars()])
    events, evaluator = run_with_producer(
        spark,
        HERE / "versions_contracts",
        "table_versions_job.py",
        [str(base)],
        workdir,
        {
            "spark.openlineage.namespace": "e2e-versions",
            "spark.jars": jars,
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension,"
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.sql.catalog.lq": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.lq.type": "hadoop",
            "spark.sql.catalog.lq.warehouse": str(base / "warehouse"),
        },
        reuse=reuse,
        history=history,
    )
    return {
        "base": base, "events": events, "evaluator": evaluator, "reuse": reuse, "history": history,
    }  # fmt: skip


def _verdicts(events: list[dict[str, Any]], path: Path, rule: str) -> list[tuple[str, str]]:
    """(status, actual) of `rule` on each COMPLETE writing `path`, in the order written."""
    out = []
    for event in sorted(events, key=lambda e: e["eventTime"]):
        if event["eventType"] != "COMPLETE":
            continue
        for dataset in event["outputs"]:
            if dataset["name"] == str(path):
                facet = dataset["facets"]["dataQualityAssertions"]
                (found,) = [a for a in facet["assertions"] if a["name"] == rule]
                text = found.get("actual") or found["params"].get("error")
                out.append((found["params"]["status"], text))
    return out


def test_each_delta_write_is_judged_at_its_own_version(versions: dict[str, Any]) -> None:
    # Both writes were done before any evaluation could finish; time travel still gives each
    # COMPLETE its own version: 3 rows (passes < 10), then 20 (fails).
    verdicts = _verdicts(versions["events"], versions["base"] / "delta_orders", "delta_rows")
    assert verdicts == [("PASSED", "3"), ("FAILED", "20")]


def _snapshots(table: Path) -> list[dict[str, Any]]:
    """The Iceberg table's snapshots (id, commit time, total-records), from its newest
    metadata file: what each write committed, read without Spark."""
    newest = max(
        (table / "metadata").glob("v*.metadata.json"),
        key=lambda p: int(p.name.split(".")[0].removeprefix("v")),
    )
    return list(json.loads(newest.read_text())["snapshots"])


def _rows_of_the_write(
    event: dict[str, Any], dataset: dict[str, Any], snapshots: list[dict[str, Any]]
) -> int | None:
    """The rows the COMPLETE's write left in the table, from what the listener sent: its
    `outputStatistics` when it sent them (it does not on every timing: issue 44.9), else the
    total of the snapshot its `version` facet names, else of the snapshot current at the
    event's time; None when no snapshot was committed by then."""
    stats = (dataset.get("outputFacets") or {}).get("outputStatistics")
    if stats is not None:
        return int(stats["rowCount"])
    version = ((dataset.get("facets") or {}).get("version") or {}).get("datasetVersion")
    if version is not None:
        named = [s for s in snapshots if str(s["snapshot-id"]) == str(version)]
        return int(named[0]["summary"]["total-records"]) if named else None
    when = dt.datetime.fromisoformat(event["eventTime"]).timestamp() * 1000
    current = [s for s in snapshots if s["timestamp-ms"] <= when]
    if not current:
        return None
    return int(max(current, key=lambda s: s["timestamp-ms"])["summary"]["total-records"])


def test_each_iceberg_write_is_judged_at_its_own_snapshot(versions: dict[str, Any]) -> None:
    path = versions["base"] / "warehouse" / "db" / "iceberg_orders"
    snapshots = _snapshots(path)
    by_write: dict[int | None, list[tuple[str, str]]] = {3: [], 20: [], None: []}
    for event in versions["events"]:
        if event["eventType"] != "COMPLETE":
            continue
        for dataset in event["outputs"]:
            if dataset["name"] == str(path):
                rows = _rows_of_the_write(event, dataset, snapshots)
                facet = dataset["facets"]["dataQualityAssertions"]
                (a,) = [a for a in facet["assertions"] if a["name"] == "iceberg_rows"]
                text = a.get("actual") or a["params"]["error"]
                by_write[rows].append((a["params"]["status"], text))
    # The listener reports each createOrReplace as two runs, one of them with the snapshot of
    # the write (then: its own numbers), the other with the snapshot before it or before the
    # commit (then: an ERROR saying so). Never the other write's numbers.
    assert ("PASSED", "3") in by_write[3] and ("FAILED", "20") in by_write[20]
    for rows, verdicts in by_write.items():
        for status, text in verdicts:
            if status == "ERROR":
                # the snapshot named is not the write's, or none existed yet at the event's time
                honest = ("is not what the run wrote", "Cannot find a snapshot older than")
                assert any(reason in text for reason in honest), text
            else:
                # no snapshot named or current then: no number can be the write's own
                assert rows is not None, (status, text)
                assert text == str(rows)


def test_a_late_evaluation_still_reads_the_runs_version(versions: dict[str, Any]) -> None:
    """The first Delta COMPLETE, evaluated again now that the table holds 20 rows: still 3."""
    path = versions["base"] / "delta_orders"
    first = min(
        (
            e
            for e in versions["events"]
            if e["eventType"] == "COMPLETE" and any(o["name"] == str(path) for o in e["outputs"])
        ),
        key=lambda e: e["eventTime"],
    )
    contracts = load_contracts([HERE / "versions_contracts"])
    fresh = Evaluator(contracts, spark=versions["evaluator"].spark)
    (results,) = fresh.evaluate(first).values()
    assert [(r.status.value, r.actual) for r in results] == [("PASSED", 3)]


def _judged(
    events: list[dict[str, Any]], path: Path, role: str
) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """(run id, its assertions by name) of each COMPLETE listing `path` as `role`."""
    out = []
    for event in events:
        if event["eventType"] != "COMPLETE":
            continue
        for dataset in event.get(role, []):
            # dataQualityAssertions is an input facet in the spec: an input's is in inputFacets
            facets = {**(dataset.get("facets") or {}), **(dataset.get("inputFacets") or {})}
            if dataset["name"] == str(path) and "dataQualityAssertions" in facets:
                found = facets["dataQualityAssertions"]["assertions"]
                out.append((event["run"]["runId"], {a["name"]: a for a in found}))
    return out


def test_readers_of_one_unchanged_version_cost_one_evaluation(versions: dict[str, Any]) -> None:
    """Issue 51.1: the Parquet dataset written once and read by three queries, and the Delta
    table's last version read by three: each version scanned once, by whichever of its runs
    came first (the write's COMPLETE may be evaluated after a reader's); the others get that
    evaluation's verdicts, saying so (`reusedFrom`: that run and when), and add no history
    point (the version counts once, under the evaluating run)."""
    history = versions["history"]
    for name, last in (("plain_orders", ("PASSED", "5")), ("delta_orders", ("FAILED", "20"))):
        path = versions["base"] / name
        readers = _judged(versions["events"], path, "inputs")
        assert len(readers) == 3, readers
        # the write of the version read (Delta: the second, 20 rows), and its three readers
        (write,) = [
            (r, a)
            for r, a in _judged(versions["events"], path, "outputs")
            if last in {(x["params"]["status"], x.get("actual")) for x in a.values()}
        ]
        runs = [write, *readers]
        fresh = [
            (r, a) for r, a in runs if all("reusedFrom" not in x["params"] for x in a.values())
        ]
        assert len(fresh) == 1, runs  # one scan of the version
        run_id, evaluated = fresh[0]
        for other, assertions in runs:
            if other == run_id:
                continue
            assert assertions.keys() == evaluated.keys()
            for rule, assertion in assertions.items():
                source = assertion["params"]["reusedFrom"]
                assert source["runId"] == run_id and source["evaluatedAt"].endswith("+00:00")
                same = (assertion["params"]["status"], assertion.get("actual"))
                assert same == (evaluated[rule]["params"]["status"], evaluated[rule].get("actual"))
            assert history.of_run(f"file:{path}", other) == []  # no second point
        assert history.of_run(f"file:{path}", run_id)
    assert versions["reuse"].reused == 2 * 3  # six of the eight runs, not one scan among them
