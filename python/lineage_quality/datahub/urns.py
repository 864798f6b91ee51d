"""URNs: datasets, schema fields, this project's platform, and stable assertion ids.

An assertion is identified by a `datahub_guid` over what it checks on what: the dataset URN, the
field(s), the rule kind and its identity parameters (threshold included; names, ids and other
descriptive keys excluded). The same rule keeps one assertion, whose run events accumulate
across runs; a changed parameter makes a new assertion.

SHACL rules (`origin == "shacl"` with a `constraint`) use the key of the SHACL -> DataHub mapping
instead, `{dataset_urn}_{field}_{constraint}`: one assertion per dataset, field and constraint,
whatever its parameters.
"""

from __future__ import annotations

from datahub.emitter.mce_builder import datahub_guid, make_assertion_urn, make_schema_field_urn
from datahub.metadata.urns import DataPlatformUrn, DatasetUrn

from lineage_quality.datahub.naming import DatasetName
from lineage_quality.kinds.datahub_mapping import identity_parameters
from lineage_quality.rules import Rule

PLATFORM = "lineage-quality"
PLATFORM_URN = str(DataPlatformUrn(PLATFORM))


def dataset_urn(dataset: DatasetName) -> str:
    return str(DatasetUrn(dataset.platform, dataset.name, dataset.env))


def field_urn(dataset: str, column: str) -> str:
    return make_schema_field_urn(dataset, column)


def shacl_key(rule: Rule, dataset: str) -> str | None:
    """`{dataset_urn}_{field}_{constraint}` for SHACL rules; None for every other rule."""
    if rule.origin != "shacl" or not rule.constraint:
        return None
    return f"{dataset}_{','.join(rule.columns)}_{rule.constraint}"


def assertion_guid(rule: Rule, dataset: str) -> str:
    key = shacl_key(rule, dataset)
    if key is not None:
        return datahub_guid({"assertionKey": key})
    return datahub_guid(
        {
            "platform": PLATFORM,
            "dataset": dataset,
            "fields": list(rule.columns),
            "kind": rule.kind.value,
            "parameters": identity_parameters(rule),
        }
    )


def assertion_urn(rule: Rule, dataset: str) -> str:
    return make_assertion_urn(assertion_guid(rule, dataset))
