"""RuleResult -> the `assertionRunEvent` of one evaluation.

Status -> result type: PASSED -> SUCCESS, FAILED -> FAILURE, ERROR -> ERROR (with an `error`
saying why), SKIPPED -> ERROR as well, with `nativeResults.status = SKIPPED` and the skip reason:
a skipped rule was not checked this run, and emitting nothing would leave the previous run's
result (maybe a SUCCESS) standing as the assertion's latest. A skip is never reported as a pass.

The error's type says its cause (`RuleResult.cause`): too little history INSUFFICIENT_DATA, a rule
that does not fit the data INVALID_PARAMETERS, a failed scan or query SOURCE_QUERY_FAILED,
unreadable data SOURCE_CONNECTION_ERROR; UNKNOWN_ERROR otherwise (a skip for a failed dependency).

What the numbers are follows the assertion's type: `actualAggValue` the row count (VOLUME), the
metric (FIELD_METRIC, SQL), the change in DataHub's terms (ROW_COUNT_CHANGE, METRIC_CHANGE: a
ratio of 1.1 is 10 percent); the offending rows go to `unexpectedCount` (`missingCount` for null
counts) for FIELD_VALUES and the per-value CUSTOM form.
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
    BatchSpecClass,
)

from lineage_quality.kinds.datahub_mapping import native, number, shape
from lineage_quality.results import Cause, RuleResult, Status
from lineage_quality.rules.history import Compare
from lineage_quality.values.datahub_shape import (
    ExpectedSchema,
    FieldMetric,
    FieldValues,
    FreshnessWindow,
    NativeAssertion,
)

_RESULT_TYPE = {
    Status.PASSED: AssertionResultTypeClass.SUCCESS,
    Status.FAILED: AssertionResultTypeClass.FAILURE,
    Status.ERROR: AssertionResultTypeClass.ERROR,
    Status.SKIPPED: AssertionResultTypeClass.ERROR,
}
_MISSING_KINDS = frozenset({"nullValues", "missingValues"})
_ERROR_TYPES = {
    Cause.INSUFFICIENT_HISTORY: AssertionResultErrorTypeClass.INSUFFICIENT_DATA,
    Cause.NO_RUN: AssertionResultErrorTypeClass.INSUFFICIENT_DATA,
    Cause.INVALID_RULE: AssertionResultErrorTypeClass.INVALID_PARAMETERS,
    Cause.QUERY_FAILED: AssertionResultErrorTypeClass.SOURCE_QUERY_FAILED,
    Cause.UNREADABLE: AssertionResultErrorTypeClass.SOURCE_CONNECTION_ERROR,
}


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
        "scope": result.scope,  # which data the verdict covers, where that needs saying
    }
    if result.actual is not None and math.isfinite(result.actual):
        values["actualValue"] = number(result.actual)
    if result.measured is not None and math.isfinite(result.measured):
        values["measured"] = number(result.measured)  # a history rule's metric itself
    for key, value in result.baseline or ():  # what a history rule compared with
        values[f"baseline.{key}"] = _text(value)
    for key, value in result.compared or ():  # a reconciliation's input side (its URN too)
        values[f"reconcile.{key}"] = _text(value)
    return {k: v for k, v in values.items() if v is not None}


def _text(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).lower()
    if isinstance(value, int | float):
        return number(value) if math.isfinite(value) else None
    return str(value)


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
        type=error_type(result),
        properties={k: v for k, v in props.items() if v},
    )


def error_type(result: RuleResult) -> str:
    """The AssertionResultErrorType of an ERROR or SKIPPED result, by its cause."""
    if result.cause is not None:
        return _ERROR_TYPES[result.cause]
    return AssertionResultErrorTypeClass.UNKNOWN_ERROR


def _agg_value(result: RuleResult, found: NativeAssertion | None) -> float | None:
    actual = result.actual
    if actual is None or not math.isfinite(actual):
        return None
    rule = result.rule
    if found is None:
        s = shape(rule)
        return float(actual) * s.scale if s.on_metric else None
    if isinstance(found, FieldValues | ExpectedSchema):
        return None  # per value: the offending rows are the result
    if isinstance(found, FreshnessWindow) and rule.history is None:
        return None  # per row: the stale rows
    if isinstance(found, FieldMetric) and found.metric == "UNIQUE_PERCENTAGE":
        return None  # measured as duplicates: unexpectedCount
    if isinstance(found, FieldMetric) and rule.kind.counts_rows and found.metric in ("MIN", "MAX"):
        return None  # SHACL's MIN / MAX, checked per value: the offending rows, unexpectedCount
    if rule.history is not None and rule.history.compare is Compare.RELATIVE_CHANGE:
        return (float(actual) - 1.0) * 100.0  # DataHub's PERCENTAGE change
    return float(actual)


def assertion_result(result: RuleResult, external_url: str | None = None) -> AssertionResultClass:
    rule = result.rule
    counted = result.failing_rows if rule.kind.counts_rows else None
    missing = rule.kind.value in _MISSING_KINDS
    return AssertionResultClass(
        type=result_type(result.status),
        rowCount=result.row_count,
        missingCount=counted if missing else None,
        unexpectedCount=None if missing else counted,
        actualAggValue=_agg_value(result, native(rule)),
        nativeResults=native_results(result),
        externalUrl=external_url,
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
    external_url: str | None = None,
    batch: BatchSpecClass | None = None,
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
        result=assertion_result(result, external_url),
        runtimeContext=dict(context) if context else None,
        batchSpec=batch,
        messageId=message_id,
    )
