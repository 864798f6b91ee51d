"""Results -> openlineage-python facet objects (never our own copies of the spec classes).

Seed 001 gives each assertion two fields that openlineage-python 1.54's `Assertion` does not
have (nor does the facet's published JSON schema forbid them): top-level `failures` (rows that
failed) and `properties` (the tool's settings of the assertion). Declaring a class of our own
with them would be a copy of the spec class that drifts from it, so the assertion is built with
openlineage-python's class, serialised by its Serde, and the two fields are added to that JSON
(`assertion_json`); once the class has them, its own values win (`setdefault`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from openlineage.client.generated.data_quality_assertions_dataset import (
    Assertion,
    DataQualityAssertionsDatasetFacet,
)
from openlineage.client.generated.test_run import TestExecution, TestRunFacet
from openlineage.client.serde import Serde

from lineage_quality.results import RuleResult, Status, finite
from lineage_quality.rules import Rule
from lineage_quality.version import PRODUCER


def _params(result: RuleResult) -> dict[str, Any]:
    params = result.rule.params()
    params["status"] = result.status.value
    if result.failing_rows is not None:
        params["failures"] = result.failing_rows
    if result.row_count is not None:
        params["rowCount"] = result.row_count
    if result.message:
        params["error" if result.status is Status.ERROR else "message"] = result.message
    if result.skip_reason:
        params["skipReason"] = result.skip_reason
    if result.scope:
        params["scope"] = result.scope
    # a NaN measured on real data has no JSON number: "NaN" / "Infinity" (results.finite)
    if result.baseline is not None:
        params["baseline"] = finite(dict(result.baseline))
    if result.measured is not None:
        params["value"] = finite(result.measured)
    if result.compared is not None:  # a reconciliation: both sides
        params["reconcile"] = finite(dict(result.compared))
    if result.batches is not None:  # a streaming query's micro-batches judged together
        params["batches"] = list(result.batches)
    if result.reused_from is not None:  # not scanned again: this version's earlier verdict
        params["reusedFrom"] = finite(dict(result.reused_from))
    if result.quarantine is not None:
        where = result.quarantine
        params["quarantine"] = {"path": where.path, "rows": where.rows}
        if where.error:
            params["quarantine"]["error"] = where.error
    if result.samples is not None and result.samples.facets:
        # lineage events travel far: only where the contract or `serve --facet-samples` says,
        # masked as everywhere; their bytes count in --max-added-bytes (producer/enrich.py)
        params["samples"] = result.samples.to_json()
    return params


# Severity words of the contract formats -> the spec's `error` ("test failure blocks pipeline") or
# `warn` ("produces warning only"): the schema-rules JSON's CRITICAL and HIGH, ODCS's and SHACL's
# error words are `error`; its MEDIUM (the default) and LOW, and info, warning, `warn`. A word
# of no format is `warn` too, as the alerts rank it (producer/alerts.py): the facet carries the
# spec's two words only; `properties.severity` keeps the contract's own.
_ERROR_WORDS = frozenset({"error", "critical", "high", "blocker"})


def facet_severity_of(severity: str | None) -> str | None:
    """A contract's severity word as the facet's `severity`: `error` or `warn` (None: none)."""
    if not severity or not severity.strip():
        return None
    return "error" if severity.strip().lower() in _ERROR_WORDS else "warn"


def _severity(result: RuleResult) -> str | None:
    return facet_severity_of(result.rule.severity)


def facet_severity(result: RuleResult) -> str | None:
    """The severity as the facets carry it (also the metrics' `severity` label)."""
    return _severity(result)


def _content(result: RuleResult) -> dict[str, str]:
    """`content`/`contentType` of the spec: the query of a SQL rule."""
    query = result.rule.query
    return {"content": query, "contentType": "sql"} if query else {}


def assertion(result: RuleResult) -> Assertion:
    rule = result.rule
    return Assertion(
        assertion=rule.assertion,
        success=result.success,
        column=rule.column,
        severity=_severity(result),
        name=rule.name or rule.id,
        description=rule.description,
        expected=result.expected,
        actual=result.actual_text(),
        params=_params(result),
        **_content(result),
    )


def assertions_facet(results: Sequence[RuleResult]) -> DataQualityAssertionsDatasetFacet:
    return DataQualityAssertionsDatasetFacet(
        assertions=[assertion(r) for r in results], producer=PRODUCER
    )


def failures(result: RuleResult) -> int | None:
    """Seed 001's `failures`: the rows that failed, for rules that count rows (a schema rule's
    count is of columns and a statistic's value is no count: they have none)."""
    return result.failing_rows if result.rule.kind.counts_rows else None


def _threshold(rule: Rule) -> dict[str, Any]:
    if rule.history is not None and not rule.history.compare.uses_threshold:
        return {"band": rule.history.describe()}  # stddev, seasonal: no operator applies
    t = rule.threshold
    bound: Any = [t.value, t.high] if t.operator.is_range else t.value
    return {t.operator.value: bound}


def _action_from(rule: Rule) -> str:
    if rule.action:
        return "declared"
    return "severity" if rule.severity else "default"


def properties(result: RuleResult) -> dict[str, Any]:
    """Seed 001's `properties`: how this tool was told to judge the rule. The contract's own
    words (threshold operator, severity as written) where the assertion's fields are the spec's
    (`expected`, `severity` as error/warn)."""
    rule = result.rule
    out: dict[str, Any] = {
        "ruleId": rule.id,
        "metric": rule.kind.value,
        "threshold": _threshold(rule),
        "unit": rule.unit.value,
        "action": rule.effective_action.value,
        "actionFrom": _action_from(rule),  # declared, by severity, or the default (ALERT)
    }
    if rule.severity:
        out["severity"] = rule.severity
    out["origin"] = rule.origin
    if rule.source:
        # The contract file's name and the key within it; not its folder, which says nothing
        # to a lineage reader about the rule and much about the evaluator's machine.
        path, sep, where = rule.source.partition(": ")
        out["declaredAt"] = os.path.basename(path) + sep + where
    return out


def assertion_json(result: RuleResult) -> dict[str, Any]:
    """The assertion as JSON, with seed 001's `failures` and `properties` (module docstring)."""
    out = to_json_dict(assertion(result))
    counted = failures(result)
    if counted is not None:
        out.setdefault("failures", counted)
    out.setdefault("properties", properties(result))
    return out


def assertions_facet_json(results: Sequence[RuleResult]) -> dict[str, Any]:
    """`assertions_facet` as the JSON events carry, each assertion as `assertion_json` gives."""
    out = to_json_dict(DataQualityAssertionsDatasetFacet(assertions=[], producer=PRODUCER))
    out["assertions"] = [assertion_json(r) for r in results]
    return out


def _test_status(result: RuleResult) -> str:
    # The spec knows pass|fail|skip; an error must alert like a failure (params.status says ERROR).
    if result.status is Status.SKIPPED:
        return "skip"
    return "pass" if result.status is Status.PASSED else "fail"


def test_run_facet(results: Sequence[tuple[str, RuleResult]]) -> TestRunFacet:
    """Every assertion of the run, with the dataset it was evaluated on (`dataset` param)."""
    tests = []
    for dataset, result in results:
        params = _params(result)
        params["dataset"] = dataset
        if result.rule.column:
            params["column"] = result.rule.column
        tests.append(
            TestExecution(
                name=result.rule.name or result.rule.id,
                status=_test_status(result),
                severity=_severity(result),
                type=result.rule.assertion,
                description=result.rule.description,
                expected=result.expected,
                actual=result.actual_text(),
                params=params,
                **_content(result),
            )
        )
    return TestRunFacet(tests=tests, producer=PRODUCER)


def to_json_dict(facet: Any) -> dict[str, Any]:
    """The facet as the JSON object OpenLineage transports would write."""
    return Serde.to_dict(facet)
