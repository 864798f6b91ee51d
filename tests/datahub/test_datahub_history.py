"""Stable assertion URNs: the same contract rules run twice accumulate run events on the same
assertions; a changed parameter makes a new assertion. The MCP file passes DataHub's check."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

import attrs
from samples import DATASET_URN, check_metadata_file, event, result, rule

from lineage_quality.contracts import BoundRules, load_contracts
from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.datahub.sink import DataHubSink
from lineage_quality.datahub.urns import assertion_urn, shacl_key
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

CONTRACT = Path(__file__).parent / "contracts" / "orders.yaml"
NS, NAME = "file", "/data/warehouse/orders"
REF = DatasetRef("outputs", 0, NS, NAME)


def _bindings() -> list[BoundRules]:
    bindings = load_contracts([str(CONTRACT)])
    assert len(bindings) == 1 and bindings[0].matches(NS, NAME)
    return bindings


def _results(rules: tuple[Rule, ...], failing: int) -> list[RuleResult]:
    out = []
    for i, r in enumerate(rules):
        status = Status.FAILED if failing and i == 0 else Status.PASSED
        out.append(result(r, status, actual=float(failing if i == 0 else 0), row_count=100))
    return out


def _run_twice(tmp_path: Path, bindings: list[BoundRules]) -> tuple[list[dict], Path]:
    path = tmp_path / "mcps.json"
    sink = DataHubSink.from_config(DataHubConfig(file=str(path)), bindings)
    rules = bindings[0].rules
    sink.emit(event("run-1", "2025-01-01T00:00:00Z"), {REF: _results(rules, failing=0)})
    sink.emit(event("run-2", "2025-01-02T00:00:00Z"), {REF: _results(rules, failing=3)})
    sink.close()
    assert (sink.emitted, sink.failed, sink.dropped) == (2, 0, 0)
    return json.loads(path.read_text()), path


def test_same_rules_twice_accumulate_run_events(tmp_path: Path) -> None:
    bindings = _bindings()
    records, path = _run_twice(tmp_path, bindings)
    check_metadata_file(path)

    rules = bindings[0].rules
    urns = {assertion_urn(r, DATASET_URN) for r in rules}
    assert len(urns) == len(rules) >= 5  # the ODCS reader adds a column-exists rule per property

    infos = Counter(r["entityUrn"] for r in records if r["aspectName"] == "assertionInfo")
    runs = [r for r in records if r["aspectName"] == "assertionRunEvent"]
    assert set(infos) == urns  # one assertion per rule, re-upserted each run
    per_assertion = Counter(r["entityUrn"] for r in runs)
    assert per_assertion == {u: 2 for u in urns}
    for urn in urns:
        events = sorted(
            (r["aspect"]["json"] for r in runs if r["entityUrn"] == urn),
            key=lambda a: a["timestampMillis"],
        )
        assert [e["runId"] for e in events] == ["run-1", "run-2"]
        assert {e["asserteeUrn"] for e in events} == {DATASET_URN}
        assert {e["assertionUrn"] for e in events} == {urn}
    first = assertion_urn(rules[0], DATASET_URN)
    results = [
        r["aspect"]["json"]["result"]["type"]
        for r in sorted(runs, key=lambda r: r["aspect"]["json"]["timestampMillis"])
        if r["entityUrn"] == first
    ]
    assert results == ["SUCCESS", "FAILURE"]
    info = next(
        r for r in records if r["entityUrn"] == first and r["aspectName"] == "assertionInfo"
    )
    props = info["aspect"]["json"]["customProperties"]
    assert props["contract"] == "orders-datahub"
    assert props["ruleId"] == rules[0].id
    assert str(CONTRACT) in props["ruleSource"]
    # This project's platform, named once per writer.
    platforms = [r for r in records if r["aspectName"] == "dataPlatformInfo"]
    assert len(platforms) == 1
    assert platforms[0]["entityUrn"] == "urn:li:dataPlatform:lineage-quality"


def test_changed_parameter_makes_a_new_assertion() -> None:
    base = rule("invalidValues")
    urn = assertion_urn(base, DATASET_URN)
    # Descriptive changes keep the assertion (and its history).
    for same in (
        attrs.evolve(base, id="renamed.rule"),
        attrs.evolve(base, name="status ok", description="d", severity="warning"),
        attrs.evolve(base, dimension="conformity", source="other.yaml: x"),
    ):
        assert assertion_urn(same, DATASET_URN) == urn
    # What is checked, and where, makes a different one.
    for other in (
        attrs.evolve(base, valid_values=("pending", "shipped", "cancelled")),
        attrs.evolve(base, threshold=Threshold(Operator.LESS_THAN, 3)),
        attrs.evolve(base, columns=("state",)),
    ):
        assert assertion_urn(other, DATASET_URN) != urn
    other_dataset = DATASET_URN.replace("orders", "orders_v2")
    assert assertion_urn(base, other_dataset) != urn


def test_changed_contract_parameter_in_a_second_run(tmp_path: Path) -> None:
    bindings = _bindings()
    changed = [
        attrs.evolve(
            b,
            rules=tuple(
                attrs.evolve(r, threshold=Threshold(Operator.BETWEEN, 1, 500))
                if r.kind.value == "rowCount"
                else r
                for r in b.rules
            ),
        )
        for b in bindings
    ]
    before = {assertion_urn(r, DATASET_URN) for r in bindings[0].rules}
    after = {assertion_urn(r, DATASET_URN) for r in changed[0].rules}
    assert len(before - after) == 1 and len(after - before) == 1


def test_shacl_rules_use_the_seed_assertion_key() -> None:
    shacl = rule(
        "lengthRange", origin="shacl", constraint="min_length", min_value=3, max_value=None
    )
    key = shacl_key(shacl, DATASET_URN)
    assert key == f"{DATASET_URN}_status_min_length"
    urn = assertion_urn(shacl, DATASET_URN)
    from datahub.emitter.mce_builder import datahub_guid

    assert urn == f"urn:li:assertion:{datahub_guid({'assertionKey': key})}"
    # The key names dataset, field and constraint: a new minimum keeps the assertion.
    assert assertion_urn(attrs.evolve(shacl, min_value=5), DATASET_URN) == urn
    assert assertion_urn(attrs.evolve(shacl, constraint="max_length"), DATASET_URN) != urn
    # Without a constraint name a SHACL rule falls back to the parameter guid.
    assert shacl_key(attrs.evolve(shacl, constraint=None), DATASET_URN) is None
