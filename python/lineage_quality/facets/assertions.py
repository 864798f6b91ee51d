"""Results -> openlineage-python facet objects (never our own copies of the spec classes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openlineage.client.generated.data_quality_assertions_dataset import (
    Assertion,
    DataQualityAssertionsDatasetFacet,
)
from openlineage.client.generated.test_run import TestExecution, TestRunFacet
from openlineage.client.serde import Serde

from lineage_quality.results import RuleResult, Status
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
    if result.quarantine is not None:
        where = result.quarantine
        params["quarantine"] = {"path": where.path, "rows": where.rows}
        if where.error:
            params["quarantine"]["error"] = where.error
    return params


# Severity words of the contract formats -> the spec's `error` / `warn` (others pass lower-cased).
_SEVERITY = {
    "warning": "warn",
    "warn": "warn",
    "error": "error",
    "critical": "error",
    "high": "error",
    "blocker": "error",
}


def _severity(result: RuleResult) -> str | None:
    severity = result.rule.severity
    return _SEVERITY.get(severity.lower(), severity.lower()) if severity else None


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
