"""A Hive metastore shared by the jobs and a long-lived `serve` (issue 25), under the real listener:
a table bound by its name (`openlineage.table`), created, then INSERTed into by a second
application while `serve` runs, then dropped and created again.

Before: the listener's table identity `hive://HOST:PORT` was taken for the table's folder (every
rule an ERROR `refused: ... not inside the location of its table`), the evaluator answered from
the relation it had cached for the table (the INSERT's verdict counted the earlier rows only), and
the DROP got verdicts measured on the table created after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .metastore import HiveMetastore
from .serve_process import assertions_of, completes, serve_process

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "hms"


def _judged(events: list[dict[str, Any]], job: str) -> list[dict[str, Any]]:
    return [e for e in completes(events, job) if assertions_of(e, "hms_orders")]


def _rows(event: dict[str, Any]) -> dict[str, Any]:
    return assertions_of(event, "hms_orders")["hms_rows"]


def test_a_shared_metastore_table_through_create_insert_drop(
    hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    conf = hive_metastore.spark_conf()
    with serve_process(tmp_path / "serve", CONTRACTS, conf) as serve:
        serve.submit("hms_job.py", ["create", "3"], conf, tmp_path, "local[1]")
        events = serve.wait_for(lambda ev: bool(_judged(ev, "create_data_source_table_as")))
        (created,) = _judged(events, "create_data_source_table_as")
        # the listener's naming of a metastore table: its location, and the table identity
        (out,) = [o for o in created["outputs"] if o["name"].endswith("hms_orders")]
        (ident,) = out["facets"]["symlinks"]["identifiers"]
        assert ident["namespace"] == f"hive://127.0.0.1:{hive_metastore.port}"
        assert ident["name"] == "default.hms_orders"
        assert out["namespace"] == "file"
        assert _rows(created)["actual"] == "3" and _rows(created)["success"] is True

        # a second application inserts while serve (which has read the table) keeps running
        serve.submit("hms_job.py", ["insert", "2"], conf, tmp_path, "local[1]")
        events = serve.wait_for(lambda ev: bool(_judged(ev, "insert_into")))
        (inserted,) = _judged(events, "insert_into")
        assert _rows(inserted)["actual"] == "5", _rows(inserted)  # not the cached 3

        serve.submit("hms_job.py", ["drop_create", "4"], conf, tmp_path, "local[1]")
        events = serve.wait_for(
            lambda ev: (
                len(_judged(ev, "create_data_source_table_as")) == 2
                and bool(completes(ev, "drop_table"))
            )
        )
    recreated = _judged(events, "create_data_source_table_as")[-1]
    assert _rows(recreated)["actual"] == "4", _rows(recreated)
    (dropped,) = completes(events, "drop_table")
    for out in dropped["outputs"]:
        assert "dataQualityAssertions" not in out.get("facets", {})
    tests = dropped["run"]["facets"]["test"]["tests"]
    assert {t["params"]["skipReason"] for t in tests} == {"DATASET_REMOVED"}
    assert all(t["status"] == "skip" for t in tests)
    # no rule of any event was refused or failed to read the table
    for event in events:
        for out in event.get("outputs", []):
            facet = out.get("facets", {}).get("dataQualityAssertions")
            for a in facet["assertions"] if facet else []:
                assert a["params"]["status"] == "PASSED", (event["job"]["name"], a)
