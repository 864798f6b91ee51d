"""Marks from upstream (lineage.Mark) as DataHub assertions on the downstream dataset (issue 39;
docs/lineage.md, docs/datahub.md). Pure.

DataHub's `AssertionInfo` has no field naming another assertion, so the link to the upstream one
is in the places it has for it: `customProperties` (`upstreamAssertionUrn`: the upstream rule's
assertion on the upstream dataset, as this producer names it, when its contract is loaded here;
`upstreamDatasetUrn`, `upstreamRule`, `upstreamRun`, `upstreamColumn`, `upstreamVersion`, `via`),
the `description`, and the CUSTOM assertion's `nativeParameters`. The assertion is CUSTOM
(`type` `upstreamQuality`) on the downstream dataset, on the marked column's schema field (none
for the whole dataset), one per (downstream dataset, column, upstream dataset, rule, column):
each marked run adds a FAILURE run event to it, and a later COMPLETE of the dataset without that
mark a SUCCESS (`cleared_mcps`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from datahub.emitter.mce_builder import datahub_guid, make_assertion_urn
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionResultClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    AssertionSourceClass,
    AssertionSourceTypeClass,
    AssertionTypeClass,
    CustomAssertionInfoClass,
)

from lineage_quality.datahub.assertion_info import platform_instance, status
from lineage_quality.datahub.config import DEFAULT_ASSERTIONS, AssertionOptions
from lineage_quality.datahub.urns import PLATFORM, field_urn
from lineage_quality.lineage.model import Mark, Origin

UPSTREAM_QUALITY = "upstreamQuality"
MESSAGE = "upstream"  # the run events' messageId suffix: `{runId}:upstream`

# (the origin of a mark) -> the upstream assertion's URN and the upstream dataset's URN
UpstreamOf = Callable[[Origin], "tuple[str | None, str | None]"]


def mark_urn(dataset: str, mark: Mark) -> str:
    """The assertion of marks of one origin failure on one column (or the whole) of `dataset`;
    the run and version are not part of it (each marked run is a run event of it)."""
    o = mark.origin
    return make_assertion_urn(
        datahub_guid(
            {
                "platform": PLATFORM,
                "dataset": dataset,
                "fields": [] if mark.column is None else [mark.column],
                "kind": UPSTREAM_QUALITY,
                "upstream": o.dataset,
                "rule": o.rule,
                "column": o.column or "",
            }
        )
    )


def _described(mark: Mark) -> str:
    o = mark.origin
    source = f"{o.dataset}.{o.column}" if o.column else o.dataset
    target = f"column {mark.column}" if mark.column else "the dataset"
    return f"{target} is derived from {source}, which failed rule {o.rule}"


def _properties(mark: Mark, upstream: str | None, upstream_dataset: str | None) -> dict[str, str]:
    o = mark.origin
    props = {
        "upstreamAssertionUrn": upstream,
        "upstreamDatasetUrn": upstream_dataset,
        "upstreamDataset": o.dataset,
        "upstreamRule": o.rule,
        "upstreamRun": o.run,
        "upstreamColumn": o.column,
        "upstreamVersion": o.version,
        "via": mark.via if mark.via != o.dataset else None,
        "viaColumn": mark.via_column if mark.via != o.dataset else None,
        "action": "BLOCK" if mark.blocking else "LOG",
    }
    return {k: v for k, v in props.items() if v}


def mark_mcps(
    dataset: str,
    marks: tuple[Mark, ...],
    run_id: str,
    millis: int,
    upstream_of: UpstreamOf,
    options: AssertionOptions = DEFAULT_ASSERTIONS,
    context: Mapping[str, str] | None = None,
) -> list[MetadataChangeProposalWrapper]:
    """The assertions of the marks of one output (`dataset`: its URN) and their FAILURE run
    events of run `run_id` at `millis`."""
    out: list[MetadataChangeProposalWrapper] = []
    for mark in marks:
        urn = mark_urn(dataset, mark)
        upstream, upstream_dataset = upstream_of(mark.origin)
        props = _properties(mark, upstream, upstream_dataset)
        info = AssertionInfoClass(
            type=AssertionTypeClass.CUSTOM,
            customAssertion=CustomAssertionInfoClass(
                type=UPSTREAM_QUALITY,
                entity=dataset,
                field=None if mark.column is None else field_urn(dataset, mark.column),
                nativeType=UPSTREAM_QUALITY,
                nativeParameters=props,
                logic=_described(mark),
            ),
            description=_described(mark)
            + (f" (upstream assertion {upstream})" if upstream else ""),
            customProperties=props,
            source=AssertionSourceClass(type=AssertionSourceTypeClass.EXTERNAL),
        )
        out += [
            MetadataChangeProposalWrapper(entityUrn=urn, aspect=info),
            MetadataChangeProposalWrapper(
                entityUrn=urn, aspect=platform_instance(options.instance)
            ),
            MetadataChangeProposalWrapper(entityUrn=urn, aspect=status(removed=False)),
            MetadataChangeProposalWrapper(
                entityUrn=urn,
                aspect=_run_event(urn, dataset, run_id, millis, False, props, context),
            ),
        ]
    return out


def cleared_mcps(
    dataset: str, urns: list[str], run_id: str, millis: int, context: Mapping[str, str] | None
) -> list[MetadataChangeProposalWrapper]:
    """SUCCESS run events for the assertions of marks `dataset`'s write by `run_id` no longer
    has (the data upstream was healthy again)."""
    return [
        MetadataChangeProposalWrapper(
            entityUrn=urn, aspect=_run_event(urn, dataset, run_id, millis, True, {}, context)
        )
        for urn in urns
    ]


def _run_event(
    urn: str,
    dataset: str,
    run_id: str,
    millis: int,
    success: bool,
    props: Mapping[str, Any],
    context: Mapping[str, str] | None,
) -> AssertionRunEventClass:
    return AssertionRunEventClass(
        timestampMillis=millis,
        runId=run_id,
        asserteeUrn=dataset,
        status=AssertionRunStatusClass.COMPLETE,
        assertionUrn=urn,
        result=AssertionResultClass(
            type=AssertionResultTypeClass.SUCCESS if success else AssertionResultTypeClass.FAILURE,
            nativeResults={k: str(v) for k, v in props.items()} or None,
        ),
        runtimeContext=dict(context) if context else None,
        messageId=f"{run_id}:{MESSAGE}",
    )
