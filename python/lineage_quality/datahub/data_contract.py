"""One DataHub `dataContract` per contract (schema object) and dataset: its assertions there,
by DataHub's categories (DATA_SCHEMA -> schema, FRESHNESS -> freshness, every other type ->
dataQuality), with `status` and `dataContractStatus` ACTIVE, as DataHub's own ODCS source and
data-contract SDK emit them. The URN is stable per contract, object and dataset (not per dataset
only, as DataHub's ODCS source keys it, so the two never overwrite each other; the object, so two
contract files of one name, `orders.json` and `orders.ttl`, stay two)."""

from __future__ import annotations

from collections.abc import Sequence

from datahub.emitter.mce_builder import datahub_guid
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AssertionTypeClass,
    DataContractPropertiesClass,
    DataContractStateClass,
    DataContractStatusClass,
    DataQualityContractClass,
    FreshnessContractClass,
    SchemaContractClass,
    StatusClass,
)

from lineage_quality.datahub.urns import PLATFORM
from lineage_quality.version import __version__


def contract_urn(contract: str, obj: str, dataset: str) -> str:
    key = {"platform": PLATFORM, "contract": contract, "object": obj, "entity": dataset}
    return f"urn:li:dataContract:{datahub_guid(key)}"


def contract_mcps(
    contract: str, obj: str, dataset: str, assertions: Sequence[tuple[str, str]]
) -> list[MetadataChangeProposalWrapper]:
    """The dataContract of `contract` on `dataset`; `assertions`: (URN, AssertionType) each."""
    assertions = list(dict(assertions).items())  # one entry per URN
    schema = [u for u, t in assertions if t == AssertionTypeClass.DATA_SCHEMA]
    freshness = [u for u, t in assertions if t == AssertionTypeClass.FRESHNESS]
    quality = [u for u, t in assertions if u not in schema and u not in freshness]
    properties = DataContractPropertiesClass(
        entity=dataset,
        schema=[SchemaContractClass(u) for u in schema] or None,
        freshness=[FreshnessContractClass(u) for u in freshness] or None,
        dataQuality=[DataQualityContractClass(u) for u in quality] or None,
    )
    state = DataContractStatusClass(
        state=DataContractStateClass.ACTIVE,
        customProperties={
            "contract": contract,
            "object": obj,
            "generator": f"lineage-quality {__version__}",
        },
    )
    return list(
        MetadataChangeProposalWrapper.construct_many(
            entityUrn=contract_urn(contract, obj, dataset),
            aspects=[properties, StatusClass(removed=False), state],
        )
    )
