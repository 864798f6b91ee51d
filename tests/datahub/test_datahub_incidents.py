"""DataHub incidents (issue 49, item 10): a failure of a rule whose action `--datahub-incidents`
names (BLOCK by default) sends an `incident` entity (`incidentInfo`, DataHub's own classes)
ACTIVE, linked to its assertion (`source`: ASSERTION_FAILURE) and its dataset (`entities`), with
one URN per assertion; the next pass sends it RESOLVED (a pass never creates one), across
producer lifetimes (the state file); a later failure makes the same incident ACTIVE again.
Checked by `datahub check metadata-file` and read back from DataHub's local store (`datahub
lite`). Before: only `assertionActions`, which DataHub acts on for its own monitors only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from datahub.metadata.schema_classes import IncidentInfoClass
from lite import Lite, assert_round_trip
from samples import DATASET_URN, REF, check_metadata_file, event, result, rule

from lineage_quality.cli.main import build_parser
from lineage_quality.datahub.config import AssertionOptions, DataHubConfig
from lineage_quality.datahub.incidents import ACTOR, incident_urn
from lineage_quality.datahub.sink import DataHubSink
from lineage_quality.datahub.urns import assertion_urn
from lineage_quality.results import Status

BLOCKING = rule("nullValues", "orders.id_not_null", columns=("id",), severity="error")
LOGGED = rule("nullValues", "orders.email_not_null", columns=("email",), action="LOG")
ALERTING = rule("rowCount", "orders.rows", action="ALERT")


def _runs(
    tmp_path: Path, statuses: list[Status], options: AssertionOptions | None = None
) -> list[dict[str, Any]]:
    """One producer lifetime per run (the state file between them), every rule with the run's
    status; the incident records written, in order."""
    path = tmp_path / "mcps.json"
    assertions = attrs.evolve(options or AssertionOptions(), state=str(tmp_path / "state.json"))
    for day, status in enumerate(statuses, start=1):
        config = DataHubConfig(file=str(path), assertions=assertions)
        sink = DataHubSink.from_config(config)
        bad = status is Status.FAILED
        sink.emit(
            event(run_id=f"run-{day}", event_time=f"2025-01-0{day}T00:00:00Z"),
            {
                REF: [
                    result(r, status, actual=5 if bad else 0) for r in (BLOCKING, LOGGED, ALERTING)
                ]
            },
        )
        sink.close()
        assert (sink.failed, sink.dropped) == (0, 0)
    check_metadata_file(path)  # DataHub's own validation of every record, incidents included
    records: list[dict[str, Any]] = json.loads(path.read_text())
    return [r for r in records if r["entityType"] == "incident"]


def _day(n: int) -> int:
    return 1735689600000 + (n - 1) * 86_400_000  # 2025-01-0n 00:00 UTC


def test_a_failure_raises_an_incident_and_the_next_pass_resolves_it(tmp_path: Path) -> None:
    runs = [Status.FAILED, Status.FAILED, Status.PASSED, Status.PASSED, Status.FAILED]
    records = _runs(tmp_path, runs)
    assertion = assertion_urn(BLOCKING, DATASET_URN)
    urn = incident_urn(assertion)
    # only the BLOCK rule raises (the default); the LOG and ALERT ones send no incident
    assert {r["entityUrn"] for r in records} == {urn}
    assert urn == incident_urn(assertion) and urn.startswith("urn:li:incident:")
    infos = [IncidentInfoClass.from_obj(r["aspect"]["json"]) for r in records]
    seen = [(i.status.state, i.created.time, i.status.lastUpdated.time) for i in infos]
    assert seen == [
        ("ACTIVE", _day(1), _day(1)),  # raised by the first failure
        ("ACTIVE", _day(1), _day(2)),  # the same incident while the failures go on
        ("RESOLVED", _day(1), _day(3)),  # resolved by the next pass; day 4's pass sends nothing
        ("ACTIVE", _day(5), _day(5)),  # failing again: the same incident, active again
    ]
    first = infos[0]
    assert first.entities == [DATASET_URN]
    assert first.source is not None and first.source.type == "ASSERTION_FAILURE"
    assert first.source.sourceUrn == assertion
    assert first.type == "FIELD" and first.customType is None  # the assertion's type
    assert first.priority == 1  # severity error
    assert first.title == "Assertion failed: id: nullValues == 0"
    assert first.created.actor == ACTOR and first.startedAt == _day(1)
    assert infos[2].status.message == "resolved: the assertion passed"


def test_the_actions_that_raise_are_the_flag_s(tmp_path: Path) -> None:
    both = AssertionOptions(incident_actions=frozenset({"BLOCK", "ALERT"}))
    records = _runs(tmp_path / "alert", [Status.FAILED, Status.PASSED], both)
    rows = incident_urn(assertion_urn(ALERTING, DATASET_URN))
    volume = [r for r in records if r["entityUrn"] == rows]
    assert [r["aspect"]["json"]["status"]["state"] for r in volume] == ["ACTIVE", "RESOLVED"]
    assert volume[0]["aspect"]["json"]["type"] == "VOLUME"
    none = AssertionOptions(incident_actions=frozenset())
    assert _runs(tmp_path / "none", [Status.FAILED, Status.PASSED], none) == []
    # the flag where DataHub output is made: serve, check, datahub publish
    parser = build_parser()
    for argv in (["serve", "--contracts", "c"], ["check", "--contract", "c", "--dataset", "d"],
                 ["datahub", "publish", "--contracts", "c"]):  # fmt: skip
        args = parser.parse_args([*argv, "--datahub-file", "x.json", "--datahub-incidents",
                                  "BLOCK,ALERT"])  # fmt: skip
        assert args.datahub_incidents == "BLOCK,ALERT"
    config = DataHubConfig.from_options(file="x.json", incidents="BLOCK,ALERT")
    assert config.assertions.incident_actions == {"BLOCK", "ALERT"}


def test_datahub_s_local_store_keeps_the_incident_as_the_last_record_says(tmp_path: Path) -> None:
    _runs(tmp_path, [Status.FAILED, Status.PASSED])
    path = tmp_path / "mcps.json"
    assert assert_round_trip(path, tmp_path / "home") > 0  # every aspect read back equal
    urn = incident_urn(assertion_urn(BLOCKING, DATASET_URN))
    stored = Lite(tmp_path / "home").get(urn)
    assert stored["incidentInfo"]["status"]["state"] == "RESOLVED"
    assert stored["incidentInfo"]["source"]["sourceUrn"] == assertion_urn(BLOCKING, DATASET_URN)
