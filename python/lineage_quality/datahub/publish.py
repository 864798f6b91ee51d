"""`lineage-quality datahub publish`: assertion definitions and data contracts before any run, as
seed 000 creates assertions "at ingestion". Each contract object bound to a dataset that DataHub
can name without an event (a binding without globs, or a catalog table) gives its rules'
assertions and its `dataContract` (definitions.py); the results come later, from `serve`,
`check` or the in-driver mode, to the same URNs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from datahub.emitter.mcp import MetadataChangeProposalWrapper

from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.datahub.definitions import contract_definition_mcps
from lineage_quality.datahub.mcps import platform_mcp
from lineage_quality.datahub.naming import DatasetName, dataset_name
from lineage_quality.datahub.published import PublishedAssertions
from lineage_quality.datahub.urns import dataset_urn
from lineage_quality.links import marquez_dataset_url

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules

_GLOB = frozenset("*?[")


@attrs.frozen
class Published:
    mcps: list[MetadataChangeProposalWrapper]
    contracts: int  # dataContracts (contract object x dataset)
    assertions: int
    skipped: list[str]  # contract objects no dataset could be named for, with why


def _datasets(binding: BoundRules, config: DataHubConfig) -> list[tuple[str, str | None]]:
    """(dataset URN, Marquez page or None) of each dataset `binding` names exactly."""
    naming = config.naming
    out: list[tuple[str, str | None]] = []
    for pattern in binding.patterns:
        if _GLOB & set(pattern.namespace + pattern.name):
            continue
        name = dataset_name(pattern.namespace, pattern.name, None, naming)
        if name is not None:
            url = config.assertions.marquez_web_url
            page = marquez_dataset_url(url, pattern.namespace, pattern.name) if url else None
            out.append((dataset_urn(name), page))
    for table in binding.tables:
        prefix = f"{naming.platform_instance}." if naming.platform_instance else ""
        name = DatasetName(naming.hive_platform_alias, prefix + table, naming.env.upper())
        out.append((dataset_urn(name), None))
    return list(dict(out).items())


def publish_mcps(bindings: Sequence[BoundRules], config: DataHubConfig) -> Published:
    published = PublishedAssertions(config.assertions.state)
    mcps = [platform_mcp()]
    contracts = assertions = 0
    skipped = []
    for binding in bindings:
        datasets = _datasets(binding, config)
        if not datasets:
            skipped.append(
                f"{binding.contract}/{binding.object_name}: bound by pattern only "
                f"({', '.join(p.namespace + ' ' + p.name for p in binding.patterns) or 'none'})"
            )
            continue
        for dataset, page in datasets:
            mcps.extend(
                contract_definition_mcps(
                    binding,
                    dataset,
                    config.assertions,
                    published,
                    page,
                )
            )
            contracts += 1
            assertions += len(binding.rules)
    return Published(mcps, contracts, assertions, skipped)
