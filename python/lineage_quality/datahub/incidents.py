"""DataHub incidents of the assertions that raise them: an `incidentInfo` ACTIVE when a rule
whose action is one of `--datahub-incidents` (BLOCK by default) fails, RESOLVED on its next pass.

An assertion's `assertionActions` (RAISE_INCIDENT / RESOLVE_INCIDENT) only ask DataHub to act,
and only DataHub's own monitors act on them: an assertion evaluated elsewhere, as these are,
raised nothing. So the incident entity is sent with the results, with DataHub's classes
(`IncidentInfoClass`): its `source` the assertion (ASSERTION_FAILURE, the assertion's URN), its
`entities` the dataset, its type the assertion's (FIELD, VOLUME, ...; CUSTOM otherwise). Its URN
is derived from the assertion's, so every failure of one assertion is the same incident and its
next pass resolves exactly that one; a failure after the resolution makes it ACTIVE again.

Which incidents are open is remembered with the assertions' state (published.py: in memory, and
in `--datahub-state` / serve's file beside the spool): a pass resolves only an incident raised
before (it never creates a resolved one), and `created` stays the first failure's time while
the failures go on. ERROR and SKIPPED results neither raise nor resolve (nothing was judged).
"""

from __future__ import annotations

from datahub.emitter.mce_builder import datahub_guid
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AuditStampClass,
    IncidentInfoClass,
    IncidentSourceClass,
    IncidentSourceTypeClass,
    IncidentStateClass,
    IncidentStatusClass,
    IncidentTypeClass,
)
from datahub.metadata.urns import IncidentUrn

from lineage_quality.datahub.assertion_info import assertion_type, describe
from lineage_quality.datahub.config import AssertionOptions
from lineage_quality.datahub.published import PublishedAssertions
from lineage_quality.datahub.urns import PLATFORM
from lineage_quality.results import RuleResult, Status

ACTOR = "urn:li:corpuser:lineage-quality"  # who raised and resolved it
CUSTOM_TYPE = "lineage-quality"  # `customType` of a CUSTOM assertion's incident
MAX_TEXT = 1000  # characters of a title or message (results carry data-derived text)
_TYPES = {
    "FRESHNESS": IncidentTypeClass.FRESHNESS,
    "VOLUME": IncidentTypeClass.VOLUME,
    "FIELD": IncidentTypeClass.FIELD,
    "SQL": IncidentTypeClass.SQL,
    "DATA_SCHEMA": IncidentTypeClass.DATA_SCHEMA,
}
# DataHub's priority: 0 critical, 1 high, 2 medium, 3 low
_PRIORITY = {"critical": 0, "blocker": 0, "error": 1, "high": 1, "medium": 2, "warn": 2,
             "warning": 2, "low": 3, "info": 3}  # fmt: skip


def incident_urn(assertion: str) -> str:
    """The one incident of `assertion` (stable: the same assertion, the same incident)."""
    return str(IncidentUrn(datahub_guid({"platform": PLATFORM, "assertion": assertion})))


def raises_incidents(result: RuleResult, options: AssertionOptions) -> bool:
    return result.rule.effective_action.value in options.incident_actions


def incident_mcps(
    result: RuleResult,
    assertion: str,
    dataset: str,
    millis: int,
    options: AssertionOptions,
    published: PublishedAssertions | None,
) -> list[MetadataChangeProposalWrapper]:
    """The incident `result` raises (FAILED) or resolves (PASSED, when one is open), if its rule
    raises incidents; else none. `millis`: the evaluated event's time."""
    if not raises_incidents(result, options):
        return []
    urn = incident_urn(assertion)
    if result.status is Status.FAILED:
        started = published.open_incident(urn, millis) if published is not None else millis
        state = IncidentStateClass.ACTIVE
        message = _failed(result)
    elif result.status is Status.PASSED:
        opened = published.close_incident(urn) if published is not None else None
        if opened is None:
            return []  # nothing raised: a pass creates no incident
        started, state = opened, IncidentStateClass.RESOLVED
        message = "resolved: the assertion passed"
    else:
        return []
    kind = assertion_type(result.rule)
    severity = (result.rule.severity or "").strip().lower()
    info = IncidentInfoClass(
        type=_TYPES.get(kind, IncidentTypeClass.CUSTOM),
        customType=None if kind in _TYPES else CUSTOM_TYPE,
        entities=[dataset],
        title=_cut(f"Assertion failed: {describe(result.rule)}"),
        description=_cut(message),
        priority=_PRIORITY.get(severity),
        status=IncidentStatusClass(
            state=state,
            lastUpdated=AuditStampClass(time=millis, actor=ACTOR),
            message=_cut(message),
        ),
        created=AuditStampClass(time=started, actor=ACTOR),
        source=IncidentSourceClass(
            type=IncidentSourceTypeClass.ASSERTION_FAILURE, sourceUrn=assertion
        ),
        startedAt=started,
    )
    return [MetadataChangeProposalWrapper(entityUrn=urn, aspect=info)]


def _failed(result: RuleResult) -> str:
    expected = result.expected or ""
    actual = result.actual_text()
    said = f"expected {expected}, actual {actual}" if actual is not None else expected
    return said or (result.message or "the assertion failed")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
