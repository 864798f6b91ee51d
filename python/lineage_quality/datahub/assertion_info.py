"""Rule -> the `assertionInfo` and `dataPlatformInstance` aspects of its assertion."""

from __future__ import annotations

from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionSourceClass,
    AssertionSourceTypeClass,
    AssertionStdParameterClass,
    AssertionStdParametersClass,
    AssertionTypeClass,
    DataPlatformInstanceClass,
    DatasetAssertionInfoClass,
)

from lineage_quality.datahub.mapping import Param, Shape, native_parameters, shape
from lineage_quality.datahub.urns import PLATFORM_URN, field_urn
from lineage_quality.rules import Rule, Unit
from lineage_quality.version import __version__


def _param(param: Param | None) -> AssertionStdParameterClass | None:
    if param is None:
        return None
    return AssertionStdParameterClass(value=param.value, type=param.type)


def _parameters(s: Shape) -> AssertionStdParametersClass | None:
    if s.value is None and s.min_value is None and s.max_value is None:
        return None
    return AssertionStdParametersClass(
        value=_param(s.value), minValue=_param(s.min_value), maxValue=_param(s.max_value)
    )


def describe(rule: Rule) -> str:
    """One line for the DataHub UI: `orders.order_id: nullValues == 0 (not_null)`."""
    suffix = "%" if rule.unit is Unit.PERCENT else ""
    target = ", ".join(rule.columns) or "dataset"
    what = rule.kind.value
    if rule.statistic:
        what = f"{what} {rule.statistic}"
    expected = f"{rule.threshold.describe()}{suffix}"
    if rule.history is not None:  # compared with the past (docs/history.md)
        band = not rule.history.compare.uses_threshold
        expected = rule.history.describe() + ("" if band else f" {expected}")
    text = f"{target}: {what} {expected}"
    if rule.description:
        return f"{rule.description} ({text})"
    return f"{rule.name}: {text}" if rule.name else text


def custom_properties(rule: Rule, contract: str | None) -> dict[str, str]:
    props = {
        "contract": contract,
        "ruleId": rule.id,
        "ruleSource": rule.source,
        "origin": rule.origin,
        "kind": rule.kind.value,
        "name": rule.name,
        "severity": rule.severity,
        "dimension": rule.dimension,
        "constraint": rule.constraint,
        "category": rule.category,
        "action": rule.action,
        "generator": f"lineage-quality {__version__}",
    }
    return {k: v for k, v in props.items() if v}


def _fields(rule: Rule, dataset: str) -> list[str] | None:
    return [field_urn(dataset, c) for c in rule.columns] or None


def assertion_info(rule: Rule, dataset: str, contract: str | None = None) -> AssertionInfoClass:
    s = shape(rule)
    return AssertionInfoClass(
        type=AssertionTypeClass.DATASET,
        datasetAssertion=DatasetAssertionInfoClass(
            dataset=dataset,
            scope=s.scope,
            operator=s.operator,
            fields=_fields(rule, dataset),
            aggregation=s.aggregation,
            parameters=_parameters(s),
            nativeType=rule.kind.value,
            nativeParameters=native_parameters(rule),
            logic=rule.query,
        ),
        description=describe(rule),
        customProperties=custom_properties(rule, contract),
        source=AssertionSourceClass(type=AssertionSourceTypeClass.EXTERNAL),
    )


def platform_instance() -> DataPlatformInstanceClass:
    return DataPlatformInstanceClass(platform=PLATFORM_URN)
