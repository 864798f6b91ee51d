"""One evaluated OpenLineage event -> its DataHub MCPs. Pure (no I/O).

Per assertion: `assertionInfo` and `dataPlatformInstance` (upserts: the same rule gives the same
URN, so re-emitting them each run is idempotent) and one `assertionRunEvent` per evaluation,
with the OpenLineage run id as `runId`, the event's `eventTime` as its timestamp and
`{runId}:{inputs|outputs}` as `messageId`: a dataset both read and written by a job keeps both
evaluations, and the same results sent again (a timed-out dataset's late results carry the
original event's time) replace the earlier run event instead of adding one.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import DataPlatformInfoClass, PlatformTypeClass

from lineage_quality.datahub.assertion_info import assertion_info, platform_instance
from lineage_quality.datahub.config import DEFAULT_NAMING, NamingConfig
from lineage_quality.datahub.naming import dataset_name
from lineage_quality.datahub.run_events import run_event
from lineage_quality.datahub.urns import PLATFORM, PLATFORM_URN, assertion_urn, dataset_urn
from lineage_quality.evaluation.refs import DatasetRef
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule

log = logging.getLogger(__name__)

ContractOf = Callable[[Rule], "str | None"]

_FRACTION = re.compile(r"(\.\d{6})\d+")


def event_millis(event: Mapping[str, Any]) -> int:
    """The event's `eventTime` in epoch milliseconds (now when it is missing or unreadable)."""
    text = event.get("eventTime")
    if isinstance(text, str):
        cleaned = _FRACTION.sub(r"\1", text.strip().replace("Z", "+00:00"))
        try:
            moment = datetime.fromisoformat(cleaned)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            return int(moment.timestamp() * 1000)
    return int(time.time() * 1000)


def _run_id(event: Mapping[str, Any]) -> str | None:
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, Mapping) else None
    return run_id if isinstance(run_id, str) and run_id else None


def _context(event: Mapping[str, Any], ref: DatasetRef) -> dict[str, str]:
    job = event.get("job")
    out = {"openlineage.dataset": ref.key, "openlineage.role": ref.role.rstrip("s")}
    if isinstance(job, Mapping):
        out["openlineage.job"] = f"{job.get('namespace')}/{job.get('name')}"
    return out


def _facets(event: Mapping[str, Any], ref: DatasetRef) -> Mapping[str, Any] | None:
    try:
        facets = event[ref.role][ref.index].get("facets")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return facets if isinstance(facets, Mapping) else None


def platform_mcp() -> MetadataChangeProposalWrapper:
    """Names this project's data platform, so DataHub shows it instead of a bare URN."""
    return MetadataChangeProposalWrapper(
        entityUrn=PLATFORM_URN,
        aspect=DataPlatformInfoClass(
            name=PLATFORM,
            displayName="lineage-quality",
            type=PlatformTypeClass.OTHERS,
            datasetNameDelimiter=".",
        ),
    )


def event_mcps(
    event: Mapping[str, Any],
    results: Mapping[DatasetRef, Sequence[RuleResult]],
    naming: NamingConfig = DEFAULT_NAMING,
    contract_of: ContractOf | None = None,
) -> list[MetadataChangeProposalWrapper]:
    """The MCPs for the results of one event; datasets DataHub cannot name are skipped."""
    run_id = _run_id(event)
    if run_id is None:
        log.warning("event without run.runId: no DataHub assertion results")
        return []
    millis = event_millis(event)
    out: list[MetadataChangeProposalWrapper] = []
    described: set[str] = set()
    for ref, rule_results in results.items():
        if not rule_results:
            continue
        name = dataset_name(ref.namespace, ref.name, _facets(event, ref), naming)
        if name is None:
            log.warning("%s: no DataHub dataset URN for it; its results are not sent", ref.key)
            continue
        dataset = dataset_urn(name)
        context = _context(event, ref)
        for result in rule_results:
            rule = result.rule
            urn = assertion_urn(rule, dataset)
            if urn not in described:
                described.add(urn)
                contract = contract_of(rule) if contract_of else None
                out.append(
                    MetadataChangeProposalWrapper(
                        entityUrn=urn, aspect=assertion_info(rule, dataset, contract)
                    )
                )
                out.append(MetadataChangeProposalWrapper(entityUrn=urn, aspect=platform_instance()))
            out.append(
                MetadataChangeProposalWrapper(
                    entityUrn=urn,
                    aspect=run_event(
                        result, urn, dataset, run_id, millis, context, f"{run_id}:{ref.role}"
                    ),
                )
            )
    return out
