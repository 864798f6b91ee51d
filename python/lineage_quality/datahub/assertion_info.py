"""Rule -> the aspects that define its assertion: `assertionInfo` (its native type, or CUSTOM),
`assertionActions` (incidents), `dataPlatformInstance` and `status`.

The type is the one the rule's kind declares (`mapping.native`, kinds/): VOLUME, FRESHNESS,
DATA_SCHEMA, FIELD or SQL; a rule none fits is CUSTOM, with its structured fields (scope,
aggregation, operator, parameters, native type and parameters). The description says what is
checked in words, a history rule's comparison included (window, k, minimum runs).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from datahub.emitter.mce_builder import make_dataplatform_instance_urn
from datahub.metadata.schema_classes import (
    AssertionActionClass,
    AssertionActionsClass,
    AssertionActionTypeClass,
    AssertionInfoClass,
    AssertionSourceClass,
    AssertionSourceTypeClass,
    AssertionTypeClass,
    CustomAssertionInfoClass,
    DataPlatformInstanceClass,
    DatasetFilterClass,
    DatasetFilterTypeClass,
    StatusClass,
)

from lineage_quality.datahub.config import DEFAULT_ASSERTIONS
from lineage_quality.datahub.native import native_fields, std_parameters
from lineage_quality.datahub.urns import PLATFORM, PLATFORM_URN, field_urn
from lineage_quality.kinds.datahub_mapping import native, native_parameters, shape, threshold_key
from lineage_quality.rules import Rule, Unit
from lineage_quality.rules.history import Compare
from lineage_quality.values.datahub_shape import number
from lineage_quality.version import __version__


def _listed(values: tuple[object, ...]) -> str:
    return json.dumps(list(values), default=str)


def _detail(rule: Rule) -> str:
    """The kind's own parameters, in words: `in [a, b]`, `within [0, 100]`, `older than 60s`."""
    parts = []
    if rule.valid_values is not None:
        parts.append(f"in {_listed(rule.valid_values)}")
    if rule.pattern is not None:
        parts.append(f"matching {rule.pattern}")
    if rule.missing_values:
        parts.append(f"null or {_listed(rule.missing_values)}")
    low, high = rule.min_value, rule.max_value
    if low is not None and high is not None:
        parts.append(f"within [{number(low)}, {number(high)}]")
    elif low is not None:
        parts.append(f">= {number(low)}")
    elif high is not None:
        parts.append(f"<= {number(high)}")
    if rule.max_age_seconds is not None:
        parts.append(f"older than {number(rule.max_age_seconds)}s")
    if rule.min_age_seconds is not None:
        parts.append(f"newer than {number(rule.min_age_seconds)}s")
    if rule.date_format is not None:
        parts.append(f"format {rule.date_format}")
    if rule.expected_type is not None:
        parts.append(f"type {rule.expected_type}")
    return f" ({'; '.join(parts)})" if parts else ""


def describe(rule: Rule) -> str:
    """One line for the DataHub UI: `order_id: nullValues == 0`, `status: invalidValues (in
    [a, b]) <= 3`; a history rule says what it compares: `dataset: rowCount ratio to the previous
    run between 0.8 and 1.25`, `order_id: nullValues within 3 sd of the last 7 runs (from 7
    earlier runs)`."""
    target = ", ".join(rule.columns) or "dataset"
    what = rule.kind.value
    if rule.statistic:
        what = f"{what} {rule.statistic}"
    what += _detail(rule)
    percent = "%" if rule.unit is Unit.PERCENT else ""
    history = rule.history
    if history is None:
        text = f"{target}: {what} {rule.threshold.describe()}{percent}"
    elif history.compare.uses_threshold:
        unit = "" if history.compare is Compare.RELATIVE_CHANGE else percent
        text = f"{target}: {what} {history.describe()} {rule.threshold.describe()}{unit}"
    else:
        # the runs it needs before it can fail: minRuns, and a band's minimum history (the
        # default setting's; docs/history.md)
        text = f"{target}: {what} {history.describe()} (from {history.needed()} earlier runs)"
    if rule.description:
        return f"{rule.description} ({text})"
    return f"{rule.name}: {text}" if rule.name else text


def _history_parameters(rule: Rule) -> dict[str, str]:
    if rule.history is None:
        return {}
    return {f"history.{k}": f"{v:g}" if isinstance(v, float) else str(v)
            for k, v in rule.history.params().items()}  # fmt: skip


def _judged_by_threshold(rule: Rule) -> bool:
    """False for a history band (stddev, seasonal): `k` decides, not the threshold."""
    return rule.history is None or rule.history.compare.uses_threshold


def shacl_parameters(rule: Rule) -> dict[str, str]:
    """Seed 000's parameters of a SHACL count constraint: `sh:minCount 1 ; sh:maxCount 1` (a
    required field, NOT_NULL) and the counts of a cardinality, as `minCount` / `maxCount`."""
    if rule.origin != "shacl":
        return {}
    if rule.constraint == "not_null":
        return {"minCount": "1", "maxCount": "1"}
    if rule.constraint in ("min_count", "cardinality"):
        counts = {"minCount": rule.min_value, "maxCount": rule.max_value}
        return {k: number(v) for k, v in counts.items() if v is not None}
    return {}


def custom_properties(rule: Rule, contract: str | None) -> dict[str, str]:
    key, value = threshold_key(rule.threshold)
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
        "action": rule.effective_action.value,
        "columns": ", ".join(rule.columns),
        "unit": rule.unit.value,
        "threshold": f"{key} {value}" if _judged_by_threshold(rule) else None,
        "generator": f"lineage-quality {__version__}",
        **_history_parameters(rule),
        **shacl_parameters(rule),
        # seed 002's rule model: what a native type has no slot for
        **{
            k: json.dumps(v) if not isinstance(v, str) else v
            for k, v in rule.params().items()
            if k in ("tags", "target", "filterCondition")
        },
    }
    return {k: v for k, v in props.items() if v}


def _custom(rule: Rule, dataset: str) -> CustomAssertionInfoClass:
    s = shape(rule)
    kind = rule.kind.value
    fields = [field_urn(dataset, c) for c in rule.columns] or None
    parameters = {**native_parameters(rule), **_history_parameters(rule), **shacl_parameters(rule)}
    if not _judged_by_threshold(rule):
        parameters.pop(threshold_key(rule.threshold)[0], None)
    return CustomAssertionInfoClass(
        type=f"{kind} {rule.history.compare.value}" if rule.history else kind,
        entity=dataset,
        fields=fields,
        scope=s.scope,
        aggregation=s.aggregation,
        operator=s.operator,
        parameters=std_parameters(s.value, s.min_value, s.max_value),
        nativeType=kind,
        nativeParameters=parameters,
        logic=rule.query or describe(rule),
    )


def assertion_type(rule: Rule) -> str:
    """VOLUME, FRESHNESS, DATA_SCHEMA, FIELD, SQL or CUSTOM."""
    found = native(rule)
    if found is None:
        return AssertionTypeClass.CUSTOM
    return str(native_fields(found, "")["type"])


def assertion_info(
    rule: Rule, dataset: str, contract: str | None = None, external_url: str | None = None
) -> AssertionInfoClass:
    found = native(rule)
    typed: dict[str, Any]
    if found is None:
        typed = {"type": AssertionTypeClass.CUSTOM, "customAssertion": _custom(rule, dataset)}
    else:
        typed = native_fields(found, dataset)
        if rule.filter_condition is not None:  # only the rows the rule counts (mapping.native)
            sub = typed.get("fieldAssertion") or typed["volumeAssertion"]
            sub.filter = DatasetFilterClass(
                type=DatasetFilterTypeClass.SQL, sql=rule.filter_condition
            )
    return AssertionInfoClass(
        **typed,
        description=describe(rule),
        customProperties=custom_properties(rule, contract),
        externalUrl=external_url,
        source=AssertionSourceClass(type=AssertionSourceTypeClass.EXTERNAL),
    )


def assertion_actions(
    rule: Rule, incident_actions: Collection[str] = DEFAULT_ASSERTIONS.incident_actions
) -> AssertionActionsClass:
    """A rule whose action is one of `incident_actions` (BLOCK by default) raises an incident
    when it fails and resolves it when it passes; any other, none (empty lists: a rule whose
    action changed stops raising)."""
    if rule.effective_action.value not in incident_actions:
        return AssertionActionsClass(onSuccess=[], onFailure=[])
    return AssertionActionsClass(
        onSuccess=[AssertionActionClass(AssertionActionTypeClass.RESOLVE_INCIDENT)],
        onFailure=[AssertionActionClass(AssertionActionTypeClass.RAISE_INCIDENT)],
    )


def platform_instance(instance: str | None = None) -> DataPlatformInstanceClass:
    """This project's platform, and its instance (`DataHubConfig.instance`) when one is set."""
    urn = make_dataplatform_instance_urn(PLATFORM, instance) if instance else None
    return DataPlatformInstanceClass(platform=PLATFORM_URN, instance=urn)


def status(removed: bool = False) -> StatusClass:
    return StatusClass(removed=removed)
