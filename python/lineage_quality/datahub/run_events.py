"""RuleResult -> the `assertionRunEvent` of one evaluation.

Status -> result type: PASSED -> SUCCESS, FAILED -> FAILURE, ERROR -> ERROR (with an `error`
saying why), SKIPPED -> ERROR as well, with `nativeResults.status = SKIPPED` and the skip reason:
a skipped rule was not checked this run, and emitting nothing would leave the previous run's
result (maybe a SUCCESS) standing as the assertion's latest. A skip is never reported as a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from datahub.metadata.schema_classes import (
    AssertionResultClass,
    AssertionResultErrorClass,
    AssertionResultErrorTypeClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
)

from lineage_quality.datahub.mapping import number, shape
from lineage_quality.results import RuleResult, Status

_RESULT_TYPE = {
    Status.PASSED: AssertionResultTypeClass.SUCCESS,
    Status.FAILED: AssertionResultTypeClass.FAILURE,
    Status.ERROR: AssertionResultTypeClass.ERROR,
    Status.SKIPPED: AssertionResultTypeClass.ERROR,
}
_MISSING_KINDS = frozenset({"nullValues", "missingValues"})


def result_type(status: Status) -> str:
    return _RESULT_TYPE[status]


def native_results(result: RuleResult) -> dict[str, str]:
    rule = result.rule
    values: dict[str, str | None] = {
        "status": result.status.value,
        "expected": result.expected,
        "actual": result.actual_text(),
        "metric": rule.kind.value,
        "unit": rule.unit.value,
        "failingRows": None if result.failing_rows is None else str(result.failing_rows),
        "rowCount": None if result.row_count is None else str(result.row_count),
        "message": result.message,
        "skipReason": result.skip_reason,
        "code": result.code,
        "observed": result.observed,
        "severity": rule.severity,
    }
    if result.actual is not None and math.isfinite(result.actual):
        values["actualValue"] = number(result.actual)
    return {k: v for k, v in values.items() if v is not None}


def _error(result: RuleResult) -> AssertionResultErrorClass | None:
    if result.status not in (Status.ERROR, Status.SKIPPED):
        return None
    props = {
        "status": result.status.value,
        "message": result.message or "",
        "skipReason": result.skip_reason or "",
        "code": result.code or "",
    }
    return AssertionResultErrorClass(
        type=AssertionResultErrorTypeClass.UNKNOWN_ERROR,
        properties={k: v for k, v in props.items() if v},
    )


def assertion_result(result: RuleResult) -> AssertionResultClass:
    rule = result.rule
    s = shape(rule)
    actual = result.actual
    agg_value = None
    if s.on_metric and actual is not None and math.isfinite(actual):
        agg_value = float(actual) * s.scale
    counted = result.failing_rows if rule.kind.counts_rows else None
    missing = rule.kind.value in _MISSING_KINDS
    return AssertionResultClass(
        type=result_type(result.status),
        rowCount=result.row_count,
        missingCount=counted if missing else None,
        unexpectedCount=None if missing else counted,
        actualAggValue=agg_value,
        nativeResults=native_results(result),
        error=_error(result),
    )


def run_event(
    result: RuleResult,
    assertion: str,
    dataset: str,
    run_id: str,
    timestamp_millis: int,
    context: Mapping[str, str] | None = None,
    message_id: str | None = None,
) -> AssertionRunEventClass:
    """One evaluation of `assertion`; the dataset is the assertee, never a schema field.

    DataHub keeps one run event per assertion, timestamp and `message_id`: sent again, it
    replaces the earlier one."""
    return AssertionRunEventClass(
        timestampMillis=timestamp_millis,
        runId=run_id,
        asserteeUrn=dataset,
        status=AssertionRunStatusClass.COMPLETE,
        assertionUrn=assertion,
        result=assertion_result(result),
        runtimeContext=dict(context) if context else None,
        messageId=message_id,
    )
