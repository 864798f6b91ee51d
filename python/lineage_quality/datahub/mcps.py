"""One evaluated OpenLineage event -> its DataHub MCPs. Pure (no I/O but the optional state of
published.py).

Per assertion: its definition (definitions.py: `assertionInfo`, `dataPlatformInstance`,
`assertionActions`, `status`; upserts: the same rule gives the same URN, so re-emitting them each
run is idempotent; `status.removed` for the assertion a changed rule supersedes), the first time
a contract is seen on a dataset (`contracts_sent`) every rule of it and its `dataContract`, and
one `assertionRunEvent` per evaluation, with the OpenLineage run id as `runId`, the event's
`eventTime` as its timestamp and `{runId}:{inputs|outputs}` as `messageId`: a dataset both read
and written by a job keeps both evaluations, and the same results sent again (a timed-out
dataset's late results carry the original event's time) replace the earlier run event instead
of adding one. After a run event, the incident its failure raises or its pass resolves, for a
rule that raises incidents (incidents.py). With a Marquez
web UI configured, results link to the dataset's page there (`externalUrl`); a dataset version
(Delta, Iceberg: the event's `version` facet) is the run event's `batchSpec.nativeBatchId`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    BatchSpecClass,
    DataPlatformInfoClass,
    PlatformTypeClass,
)

from lineage_quality.datahub.config import (
    DEFAULT_ASSERTIONS,
    DEFAULT_NAMING,
    AssertionOptions,
    NamingConfig,
)
from lineage_quality.datahub.definitions import (
    contract_definition_mcps,
    contract_scope,
    definition_mcps,
)
from lineage_quality.datahub.incidents import incident_mcps
from lineage_quality.datahub.naming import dataset_name
from lineage_quality.datahub.published import PublishedAssertions
from lineage_quality.datahub.run_events import run_event
from lineage_quality.datahub.upstream import UpstreamOf, cleared_mcps, mark_mcps, mark_urn
from lineage_quality.datahub.urns import PLATFORM, PLATFORM_URN, assertion_urn, dataset_urn
from lineage_quality.lineage.model import Mark
from lineage_quality.links import marquez_dataset_url
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule
from lineage_quality.values.event import Event, datasets_of
from lineage_quality.values.refs import DatasetRef

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules

log = logging.getLogger(__name__)

ContractOf = Callable[[Rule], "str | None"]
BindingOf = Callable[[Rule], "BoundRules | None"]

_FRACTION = re.compile(r"(\.\d{6})\d+")


def event_millis(event: Event | Mapping[str, Any]) -> int:
    """The event's `eventTime` in epoch milliseconds (now when it is missing or unreadable)."""
    text = Event.of(event).event_time
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
    return Event.of(event).run_id or None


def _context(event: Mapping[str, Any], ref: DatasetRef) -> dict[str, str]:
    ev = Event.of(event)
    out = {"openlineage.dataset": ref.key, "openlineage.role": ref.role.rstrip("s")}
    if ev.job:
        out["openlineage.job"] = ev.job_label
    return out


def _facets(event: Mapping[str, Any], ref: DatasetRef) -> Mapping[str, Any] | None:
    return Event.of(event).dataset(ref).facets or None


def _batch(facets: Mapping[str, Any] | None) -> BatchSpecClass | None:
    version = facets.get("version") if facets else None
    value = version.get("datasetVersion") if isinstance(version, Mapping) else None
    return BatchSpecClass(nativeBatchId=str(value)) if value not in (None, "") else None


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
    options: AssertionOptions = DEFAULT_ASSERTIONS,
    published: PublishedAssertions | None = None,
    binding_of: BindingOf | None = None,
    contracts_sent: set[tuple[str, str]] | None = None,
) -> list[MetadataChangeProposalWrapper]:
    """The MCPs for the results of one event; datasets DataHub cannot name are skipped.

    `binding_of` names the contract of a rule (its `contract` is the assertion's); a contract
    first seen on a dataset (not in `contracts_sent`, which this adds to) brings all its rules'
    definitions and its dataContract."""
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
        facets = _facets(event, ref)
        name = dataset_name(ref.namespace, ref.name, facets, naming)
        if name is None:
            log.warning("%s: no DataHub dataset URN for it; its results are not sent", ref.key)
            continue
        dataset = dataset_urn(name)
        context = _context(event, ref)
        url = None
        if options.marquez_web_url:
            url = marquez_dataset_url(options.marquez_web_url, ref.namespace, ref.name)
        batch = _batch(facets)
        for result in rule_results:
            rule = result.rule
            urn = assertion_urn(rule, dataset)
            binding = binding_of(rule) if binding_of else None
            contract = binding.contract if binding else None
            if contract is None and contract_of is not None:
                contract = contract_of(rule)
            if binding is not None and contracts_sent is not None:
                key = (f"{binding.contract}\0{binding.object_name}", dataset)
                if key not in contracts_sent:
                    contracts_sent.add(key)
                    out.extend(contract_definition_mcps(binding, dataset, options, published, url))
                    described.update(assertion_urn(r, dataset) for r in binding.rules)
            if urn not in described:
                described.add(urn)
                scope = contract_scope(binding) if binding is not None else None
                out.extend(definition_mcps(rule, dataset, contract, options, published, url, scope))
            out.append(
                MetadataChangeProposalWrapper(
                    entityUrn=urn,
                    aspect=run_event(
                        result,
                        urn,
                        dataset,
                        run_id,
                        millis,
                        _with_input(context, result, event, naming),
                        f"{run_id}:{ref.role}",
                        external_url=url,
                        batch=batch,
                    ),
                )
            )
            out.extend(incident_mcps(result, urn, dataset, millis, options, published))
    return out


def _with_input(
    context: dict[str, str], result: RuleResult, event: Mapping[str, Any], naming: NamingConfig
) -> dict[str, str]:
    """A reconciliation's run context names the input it compared with by its DataHub URN."""
    compared = dict(result.compared or ())
    key = compared.get("input")
    if key is None:
        return context
    source = next((d for d in Event.of(event).inputs if d.key == key), None)
    name = None if source is None else dataset_name(
        source.ref.namespace, source.ref.name, source.facets, naming
    )  # fmt: skip
    return context if name is None else {**context, "reconcile.inputUrn": dataset_urn(name)}


_KEYED = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/]*(?::\d+)?):(.*)", re.S)
MAX_MARKED = 10_000  # datasets whose marked assertions are remembered (to send their SUCCESS)


def split_key(key: str) -> tuple[str, str]:
    """`namespace:name` (DatasetRef.key) back into its parts: a namespace with a scheme
    (`s3://bucket`, `hive://host:9083`) ends after its authority (and port)."""
    found = _KEYED.match(key)
    if found is not None:
        return found.group(1), found.group(2)
    namespace, _, name = key.partition(":")
    return namespace, name


def event_mark_mcps(
    event: Mapping[str, Any],
    marks: Mapping[DatasetRef, Sequence[Mark]],
    upstream_of: UpstreamOf,
    marked: dict[str, set[str]],
    naming: NamingConfig = DEFAULT_NAMING,
    options: AssertionOptions = DEFAULT_ASSERTIONS,
) -> list[MetadataChangeProposalWrapper]:
    """The propagated assertions of a COMPLETE's outputs (datahub/upstream.py) and, for an
    output that had marks before (`marked`, by dataset URN, updated here) but has none of them
    now, their SUCCESS."""
    run_id = _run_id(event)
    if run_id is None or not Event.of(event).complete:
        return []
    millis = event_millis(event)
    out: list[MetadataChangeProposalWrapper] = []
    for ref in datasets_of(event):
        if ref.role != "outputs":
            continue
        name = dataset_name(ref.namespace, ref.name, _facets(event, ref), naming)
        if name is None:
            continue
        dataset = dataset_urn(name)
        context = _context(event, ref)
        found = tuple(marks.get(ref, ()))
        now = {mark_urn(dataset, m) for m in found}
        gone = sorted(marked.get(dataset, set()) - now)
        out += mark_mcps(dataset, found, run_id, millis, upstream_of, options, context)
        out += cleared_mcps(dataset, gone, run_id, millis, context)
        if now:
            if dataset not in marked and len(marked) >= MAX_MARKED:
                marked.pop(next(iter(marked)))  # the oldest remembered: bounded
            marked[dataset] = now
        else:
            marked.pop(dataset, None)
    return out
