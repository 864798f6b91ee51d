"""DatasetMeasures -> OpenLineage `dataQualityMetrics`, with openlineage-python's own classes.

Inputs get `DataQualityMetricsInputDatasetFacet` (an InputDatasetFacet: `inputFacets`, where
Marquez and DataHub's converters read it). The spec now also defines the same numbers as a plain
DatasetFacet, `DataQualityMetricsDatasetFacet` (with `captureDate`), which may sit on an output
under `facets`; outputs get that one (docs/metrics.md).

Only what the spec's ColumnMetrics holds goes here: nullCount, count (non-null values),
distinctCount (exact, from a uniqueness rule's pass), sum, min, max, and the median as quantile
0.5. A mean or a standard deviation has no field there; they stay in their rule's assertion
(`actual`). A value JSON cannot carry (NaN, an infinity) is left out, as is a column with no
number left.
"""

from __future__ import annotations

import math
from typing import Any

from openlineage.client.generated import data_quality_metrics_dataset as plain
from openlineage.client.generated import data_quality_metrics_input_dataset as on_input

from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.version import PRODUCER


def _finite(value: int | float | None) -> int | float | None:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _quantiles(m: ColumnMeasures) -> dict[str, float] | None:
    # ColumnMetrics defaults `quantiles` to {}, which Serde would write out: None leaves it out.
    median = _finite(m.median)
    return None if median is None else {"0.5": median}


def _count(m: ColumnMeasures, rows: int) -> int | None:
    # non-null values: known exactly wherever the nulls are
    return None if m.nulls is None else rows - m.nulls


def _reported(m: ColumnMeasures) -> bool:
    """Whether a column has a number the spec's ColumnMetrics can hold."""
    numbers = (m.nulls, m.distinct, _finite(m.sum), _finite(m.min), _finite(m.max))
    return any(v is not None for v in numbers) or _quantiles(m) is not None


def _column_fields(m: ColumnMeasures, rows: int) -> dict[str, Any]:
    """One column's numbers as both spec classes of ColumnMetrics name them (the input facet's
    and the dataset facet's are separate generated classes with the same fields)."""
    return {
        "nullCount": m.nulls,
        "distinctCount": m.distinct,
        "count": _count(m, rows),
        "sum": _finite(m.sum),
        "min": _finite(m.min),
        "max": _finite(m.max),
        "quantiles": _quantiles(m),
    }


def input_metrics_facet(
    measures: DatasetMeasures,
) -> on_input.DataQualityMetricsInputDatasetFacet:
    columns = {
        name: on_input.ColumnMetrics(**_column_fields(m, measures.rows))
        for name, m in measures.columns
        if _reported(m)
    }
    return on_input.DataQualityMetricsInputDatasetFacet(
        columnMetrics=columns, rowCount=measures.rows, producer=PRODUCER
    )


def dataset_metrics_facet(
    measures: DatasetMeasures, captured: str | None = None
) -> plain.DataQualityMetricsDatasetFacet:
    """The same numbers as a DatasetFacet; `captured`: when the measured data was the dataset's
    state (the COMPLETE's eventTime), left out unless it is an ISO-8601 date-time."""
    columns = {
        name: plain.ColumnMetrics(**_column_fields(m, measures.rows))
        for name, m in measures.columns
        if _reported(m)
    }
    return plain.DataQualityMetricsDatasetFacet(
        columnMetrics=columns,
        rowCount=measures.rows,
        captureDate=_date_time(captured),
        producer=PRODUCER,
    )


def _date_time(text: str | None) -> str | None:
    """`text` if the facet's validator takes it: the time comes from the event, and a malformed
    one must cost only this field, never the enrichment."""
    if text is None:
        return None
    try:
        plain.DataQualityMetricsDatasetFacet(columnMetrics={}, captureDate=text)
    except (ValueError, TypeError, OverflowError):
        return None
    return text
