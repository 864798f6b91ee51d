"""A mark from upstream (lineage.Mark) as the facets carry it: an `upstreamQuality` assertion on
the output (`success` false, `column` the derived column, or none for the whole dataset) and
its entry in the run's `test` facet, with openlineage-python's classes (docs/lineage.md).

`params` names the failure it comes from (`upstreamDataset`, `upstreamColumn`, `upstreamRule`,
`upstreamRun`, `upstreamVersion`) and the input of this run it came through (`via`,
`viaColumn`); `status` is FAILED, `action` LOG or BLOCK as the policy said.
"""

from __future__ import annotations

from typing import Any

from openlineage.client.generated.data_quality_assertions_dataset import Assertion
from openlineage.client.generated.test_run import TestExecution

from lineage_quality.facets.assertions import to_json_dict
from lineage_quality.lineage.model import Mark

UPSTREAM_QUALITY = "upstreamQuality"


def _params(mark: Mark) -> dict[str, Any]:
    o = mark.origin
    params: dict[str, Any] = {
        "status": "FAILED",
        "action": "BLOCK" if mark.blocking else "LOG",
        "upstreamDataset": o.dataset,
        "upstreamRule": o.rule,
        "upstreamRun": o.run,
    }
    if o.column is not None:
        params["upstreamColumn"] = o.column
    if o.version is not None:
        params["upstreamVersion"] = o.version
    if mark.via != o.dataset or mark.via_column != o.column:
        params["via"] = mark.via
        if mark.via_column is not None:
            params["viaColumn"] = mark.via_column
    return params


def _description(mark: Mark) -> str:
    o = mark.origin
    source = f"{o.dataset}.{o.column}" if o.column else o.dataset
    target = f"column {mark.column}" if mark.column else "this dataset"
    return f"{target} is derived from {source}, which failed rule {o.rule} in run {o.run}"


def upstream_assertion_json(mark: Mark) -> dict[str, Any]:
    """The mark as an assertion of the output's `dataQualityAssertions` facet."""
    return to_json_dict(
        Assertion(
            assertion=UPSTREAM_QUALITY,
            success=False,
            column=mark.column,
            severity="error" if mark.blocking else "warn",
            name=UPSTREAM_QUALITY,
            description=_description(mark),
            params=_params(mark),
        )
    )


def upstream_test_json(mark: Mark, dataset: str) -> dict[str, Any]:
    """The mark as an entry of the run's `test` facet (`dataset`: the output's key)."""
    params = _params(mark)
    params["dataset"] = dataset
    if mark.column is not None:
        params["column"] = mark.column
    return to_json_dict(
        TestExecution(
            name=UPSTREAM_QUALITY,
            status="fail",
            severity="error" if mark.blocking else "warn",
            type=UPSTREAM_QUALITY,
            description=_description(mark),
            params=params,
        )
    )
