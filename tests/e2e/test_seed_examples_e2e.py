"""Issue 41's done-when, under the real listener: the seeds' example contracts (tests/seed_examples,
each file verbatim) served by the producer, bound by name to the catalog tables a job writes
(ODCS fragments and schema-rules files by their name or their targets' tables, the SHACL
dataset without accessURL by its name: the `logical` platform). One run writes data on which
every rule passes, a second data on which every rule measuring the data fails (FAILED, or SKIPPED
behind a failed schema rule; never an ERROR)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pipeline import run_with_producer

from lineage_quality.contracts import load_contracts
from lineage_quality.contracts.shacl import ShaclOptions

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[1] / "seed_examples"
REFUSED = (  # a property's quality shown without its property; a template (tests/cli)
    "s003_00_",
    "s003_01_",
    "s003_06_",
    "s003_10_",
    "s003_11_",
    "s002_00_",
)
SHACL = ShaclOptions(create_assertions=True)


def _ts(days: int) -> str:
    return (dt.datetime.now() - dt.timedelta(days=days)).strftime("%Y-%m-%d %H:%M:%S")


USERS = "id INT, email STRING, name STRING, price DECIMAL(10,2), created_at TIMESTAMP"
# table -> (columns, rows where every rule passes, columns, rows where every data rule fails);
# an int instead of rows: that many rows (spark.range)
TABLES: dict[str, tuple[str, Any, str, Any]] = {
    "s003_02_null_values": ("order_id INT", [["1"], ["2"]], "order_id INT",
                            [[None]] * 10 + [["1"], ["2"]]),
    "s003_03_missing_values": ("email_address STRING", [["a@x.org"]], "email_address STRING",
                               [[""]] * 60 + [["N/A"]] * 40),
    "s003_04_valid_values": ("line_item_unit STRING", [["kg"], ["pounds"]],
                             "line_item_unit STRING", [["lbs"]] * 5),
    "s003_05_valid_values_iban_pattern": ("iban STRING", [["DE89370400440532013000"]],
                                          "iban STRING", [["not an IBAN"]]),
    "s003_07_duplicate_values_schema": ("tenant_id INT, order_id INT", [["1", "1"], ["1", "2"]],
                                        "tenant_id INT, order_id INT", [["1", "1"], ["1", "1"]]),
    "s003_08_row_count": ("id BIGINT", 1_000_001, "id BIGINT", 3),
    "s003_09_avg": ("order_total DOUBLE", [["150"]], "order_total DOUBLE", [["10"]]),
    "employees": ("id BIGINT", 1001, "id BIGINT", 1000),
    "orders": ("tenant_id INT, order_id INT", [["1", "1"], ["2", "1"]],
               "tenant_id INT, order_id INT", [["1", "1"], ["1", "1"]]),
    "s003_14_verb_null_values": ("order_id INT", [["1"]], "order_id INT", [[None]]),
    "s003_15_verb_allowed_values": ("status STRING", [["OPEN"]], "status STRING", [["CLOSED"]]),
    "s003_16_verb_uniqueness": ("customer_id INT", [["1"], ["2"]], "customer_id INT",
                                [["1"], ["1"]]),
    "s003_17_verb_age_checks": ("created_at TIMESTAMP", [[_ts(100)]], "created_at TIMESTAMP",
                                [[_ts(1)], [_ts(400)]]),
    "s003_18_verb_aggregations": ("price DOUBLE, quantity INT, salary INT",
                                  [["60", "4000", "5"], ["70", "6000", "7"]],
                                  "price DOUBLE, quantity INT, salary INT", [["10", "1", "0"]]),
    "s003_19_optional_a_value_check": ("price DOUBLE", [["1.5"]], "price DOUBLE", [["1.0"]]),
    "s002_01_basic_type": ("name STRING", [["ann"]], "name INT", [["1"]]),
    "s002_02_length_constraint": ("name STRING", [["ann"]], "name STRING", [["a" * 101]]),
    "s002_03_precision_scale": ("price DECIMAL(10,2)", [["1.50"]], "price DECIMAL(12,2)",
                                [["1.50"]]),
    "s002_04_complex_field": ("email STRING", [["a@x.org"]], "email STRING",
                              [[None], ["a" * 256]]),
    "sales.users": (USERS, [["1", "a@x.org", "ann", "1.50", _ts(0)]], USERS + ", extra INT",
                    [["1", "a" * 256, "b" * 101, "1.50", _ts(0), "1"],
                     ["2", None, "ann", "1.50", _ts(0), "2"]]),
    "hr.employees": ("age INT", [["30"]], "age INT", [["130"]]),
    "sales.orders": ("status STRING, deleted_at TIMESTAMP", [["NEW", None], ["OLD", _ts(1)]],
                     "status STRING, deleted_at TIMESTAMP", [["OLD", None]]),
    "TradeDataset": ("tradeId STRING", [["TRADE-0001"]], "tradeId STRING",
                     [[None], ["T-1"], ["T" * 21]]),
}  # fmt: skip


def _spec(passing: bool) -> list[dict[str, Any]]:
    out = []
    for table, (ddl, rows, bad_ddl, bad_rows) in TABLES.items():
        ddl, rows = (ddl, rows) if passing else (bad_ddl, bad_rows)
        item: dict[str, Any] = {"table": table, "ddl": ddl}
        item["range" if isinstance(rows, int) else "rows"] = rows
        out.append(item)
    return out


def _statuses(events: list[dict[str, Any]]) -> dict[str, set[str]]:
    """rule id -> the statuses the forwarded facets report for it."""
    found: dict[str, set[str]] = {}
    for event in events:
        for dataset in event.get("outputs", []):
            facet = (dataset.get("facets") or {}).get("dataQualityAssertions")
            for a in (facet or {}).get("assertions", []):
                found.setdefault(a["params"]["ruleId"], set()).add(a["params"]["status"])
    return found


def _details(events: list[dict[str, Any]]) -> list[tuple[str, str, str, Any]]:
    """(event type, dataset, rule id, params) of every assertion: what a failure shows."""
    return [
        (e["eventType"], d["name"], a["params"]["ruleId"], a["params"])
        for e in events
        for d in e.get("outputs", [])
        for a in ((d.get("facets") or {}).get("dataQualityAssertions") or {}).get("assertions", [])
    ]


@pytest.fixture(scope="module")
def served(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("seeds")
    contracts = workdir / "contracts"
    contracts.mkdir()
    for path in sorted(EXAMPLES.iterdir()):
        if path.suffix in (".yaml", ".json", ".ttl") and not path.name.startswith(REFUSED):
            shutil.copyfile(path, contracts / path.name)  # verbatim
    out: dict[str, Any] = {"contracts": contracts}
    for label, passing in (("pass", True), ("fail", False)):
        run = workdir / label
        run.mkdir()
        spec = run / "spec.json"
        spec.write_text(json.dumps(_spec(passing)))
        events, _ = run_with_producer(
            spark,
            contracts,
            "seed_examples_job.py",
            [str(spec), str(run / "warehouse")],
            run,
            {"spark.openlineage.namespace": "e2e-seeds"},
            shacl=SHACL,
        )
        out[label] = _statuses(events)
        out[f"{label}_details"] = _details(events)
    return out


def test_every_served_example_rule_passes_on_good_data(served: dict[str, Any]) -> None:
    rules = [r for b in load_contracts([served["contracts"]], shacl=SHACL) for r in b.rules]
    assert len(rules) == 56
    missing = sorted({r.id for r in rules} - set(served["pass"]))
    assert not missing, f"rules never evaluated under the listener: {missing}"
    bad = {rid for rid, s in served["pass"].items() if s != {"PASSED"}}
    assert not bad, [d for d in served["pass_details"] if d[2] in bad]


def test_every_served_example_rule_on_the_data_fails_on_bad_data(served: dict[str, Any]) -> None:
    rules = [r for b in load_contracts([served["contracts"]], shacl=SHACL) for r in b.rules]
    for rule in rules:
        statuses = served["fail"].get(rule.id)
        assert statuses, f"{rule.id} not evaluated in the failing run"
        shown = [d for d in served["fail_details"] if d[2] == rule.id]
        assert "ERROR" not in statuses, shown
        if rule.kind.scan != "schema":  # schema rules: the checks through `check` fail them
            assert statuses <= {"FAILED", "SKIPPED"}, shown
