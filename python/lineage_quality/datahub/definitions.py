"""The MCPs that define assertions (not their results): each rule's `assertionInfo`,
`dataPlatformInstance`, `assertionActions` and `status`; `status.removed` for the assertion a
changed rule supersedes (published.py); and a contract's rules on a dataset with their
`dataContract`. Sent with the first results of each assertion (mcps.py) and, before any run,
by `lineage-quality datahub publish` (publish.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from lineage_quality.datahub.assertion_info import (
    assertion_actions,
    assertion_info,
    assertion_type,
    platform_instance,
    status,
)
from lineage_quality.datahub.config import DEFAULT_ASSERTIONS, AssertionOptions
from lineage_quality.datahub.data_contract import contract_mcps
from lineage_quality.datahub.published import PublishedAssertions
from lineage_quality.datahub.urns import assertion_urn
from lineage_quality.rules import Rule

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules


def contract_scope(binding: BoundRules) -> str:
    """What a rule id is unique within: its contract and schema object."""
    return f"{binding.contract}/{binding.object_name}"


def definition_mcps(
    rule: Rule,
    dataset: str,
    contract: str | None = None,
    options: AssertionOptions = DEFAULT_ASSERTIONS,
    published: PublishedAssertions | None = None,
    external_url: str | None = None,
    scope: str | None = None,
) -> list[MetadataChangeProposalWrapper]:
    """The aspects of `rule`'s assertion on `dataset`, and the removal of the one it replaces
    (a rule is known by dataset, `scope` (its contract object, else `contract`) and id)."""
    urn = assertion_urn(rule, dataset)
    out = [
        MetadataChangeProposalWrapper(
            entityUrn=urn, aspect=assertion_info(rule, dataset, contract, external_url)
        ),
        MetadataChangeProposalWrapper(entityUrn=urn, aspect=platform_instance(options.instance)),
        MetadataChangeProposalWrapper(
            entityUrn=urn, aspect=assertion_actions(rule, options.incident_actions)
        ),
        MetadataChangeProposalWrapper(entityUrn=urn, aspect=status(removed=False)),
    ]
    if published is not None:
        before = published.supersede(dataset, scope or contract, rule.id, urn)
        if before is not None:
            out.append(MetadataChangeProposalWrapper(entityUrn=before, aspect=status(True)))
    return out


def contract_definition_mcps(
    binding: BoundRules,
    dataset: str,
    options: AssertionOptions = DEFAULT_ASSERTIONS,
    published: PublishedAssertions | None = None,
    external_url: str | None = None,
) -> list[MetadataChangeProposalWrapper]:
    """Every rule of a contract's schema object on `dataset` (defined), the removal of the
    assertions of rules deleted from it since it was last sent, then its `dataContract`."""
    contract = binding.contract
    scope = contract_scope(binding)
    out: list[MetadataChangeProposalWrapper] = []
    typed: list[tuple[str, str]] = []
    for rule in binding.rules:
        out.extend(
            definition_mcps(rule, dataset, contract, options, published, external_url, scope)
        )
        typed.append((assertion_urn(rule, dataset), assertion_type(rule)))
    if published is not None:
        current = {urn for urn, _ in typed}
        for gone in published.retire(dataset, scope, {r.id for r in binding.rules}):
            if gone not in current:  # still another rule's assertion
                out.append(MetadataChangeProposalWrapper(entityUrn=gone, aspect=status(True)))
    out.extend(contract_mcps(contract, binding.object_name, dataset, typed))
    return out
