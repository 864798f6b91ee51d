"""The native assertion a kind declares (values/datahub_shape.py values) -> DataHub's classes: the
`volumeAssertion`, `freshnessAssertion`, `schemaAssertion`, `fieldAssertion` or `sqlAssertion` of
an `assertionInfo`, as DataHub's own ODCS source and data-contract SDK build them."""

from __future__ import annotations

from typing import Any

from datahub.metadata.schema_classes import (
    ArrayTypeClass,
    AssertionStdParameterClass,
    AssertionStdParametersClass,
    BooleanTypeClass,
    BytesTypeClass,
    CalendarIntervalClass,
    DateTypeClass,
    FieldAssertionInfoClass,
    FieldAssertionTypeClass,
    FieldMetricAssertionClass,
    FieldTransformClass,
    FieldValuesAssertionClass,
    FieldValuesFailThresholdClass,
    FixedIntervalScheduleClass,
    FreshnessAssertionInfoClass,
    FreshnessAssertionScheduleClass,
    FreshnessAssertionScheduleTypeClass,
    FreshnessAssertionTypeClass,
    MapTypeClass,
    NullTypeClass,
    NumberTypeClass,
    RecordTypeClass,
    RowCountChangeClass,
    RowCountTotalClass,
    SchemaAssertionInfoClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaFieldSpecClass,
    SchemalessClass,
    SchemaMetadataClass,
    SqlAssertionInfoClass,
    SqlAssertionTypeClass,
    StringTypeClass,
    TimeTypeClass,
    VolumeAssertionInfoClass,
    VolumeAssertionTypeClass,
)

from lineage_quality.values.datahub_shape import (
    NATIVE_TYPES,
    Bounds,
    ExpectedSchema,
    FieldMetric,
    FieldSpec,
    FieldValues,
    FreshnessWindow,
    NativeAssertion,
    Param,
    SqlMetric,
    Volume,
)

_FIELD_TYPES: dict[str, Any] = {
    "NUMBER": NumberTypeClass,
    "STRING": StringTypeClass,
    "BOOLEAN": BooleanTypeClass,
    "DATE": DateTypeClass,
    "TIME": TimeTypeClass,
    "BYTES": BytesTypeClass,
    "ARRAY": ArrayTypeClass,
    "MAP": MapTypeClass,
    "STRUCT": RecordTypeClass,
}


def _param(param: Param | None) -> AssertionStdParameterClass | None:
    return None if param is None else AssertionStdParameterClass(param.value, param.type)


def std_parameters(
    value: Param | None, min_value: Param | None, max_value: Param | None
) -> AssertionStdParametersClass | None:
    if value is None and min_value is None and max_value is None:
        return None
    return AssertionStdParametersClass(
        value=_param(value), minValue=_param(min_value), maxValue=_param(max_value)
    )


def _parameters(b: Bounds) -> AssertionStdParametersClass | None:
    return std_parameters(b.value, b.min_value, b.max_value)


def _required(b: Bounds) -> AssertionStdParametersClass:
    return _parameters(b) or AssertionStdParametersClass()


def _field_spec(field: FieldSpec) -> SchemaFieldSpecClass:
    return SchemaFieldSpecClass(path=field.path, type=field.type, nativeType=field.native_type)


def _schema_field(field: FieldSpec) -> SchemaFieldClass:
    data_type = _FIELD_TYPES.get(field.type, NullTypeClass)()
    return SchemaFieldClass(
        fieldPath=field.path,
        type=SchemaFieldDataTypeClass(type=data_type),
        nativeDataType=field.native_type,
    )


def native_fields(found: NativeAssertion, dataset: str) -> dict[str, Any]:
    """`type=` and the one sub-aspect of an AssertionInfoClass for `found` on `dataset`."""
    out: dict[str, Any] = {"type": NATIVE_TYPES[type(found)]}
    if isinstance(found, Volume):
        if found.change is None:
            out["volumeAssertion"] = VolumeAssertionInfoClass(
                type=VolumeAssertionTypeClass.ROW_COUNT_TOTAL,
                entity=dataset,
                rowCountTotal=RowCountTotalClass(found.bounds.operator, _required(found.bounds)),
            )
        else:
            out["volumeAssertion"] = VolumeAssertionInfoClass(
                type=VolumeAssertionTypeClass.ROW_COUNT_CHANGE,
                entity=dataset,
                rowCountChange=RowCountChangeClass(
                    type=found.change,
                    operator=found.bounds.operator,
                    parameters=_required(found.bounds),
                ),
            )
    elif isinstance(found, FreshnessWindow):
        out["freshnessAssertion"] = FreshnessAssertionInfoClass(
            type=FreshnessAssertionTypeClass.DATASET_CHANGE,
            entity=dataset,
            schedule=FreshnessAssertionScheduleClass(
                type=FreshnessAssertionScheduleTypeClass.FIXED_INTERVAL,
                fixedInterval=FixedIntervalScheduleClass(
                    unit=CalendarIntervalClass.SECOND, multiple=found.seconds
                ),
            ),
        )
    elif isinstance(found, ExpectedSchema):
        out["schemaAssertion"] = SchemaAssertionInfoClass(
            entity=dataset,
            schema=SchemaMetadataClass(
                schemaName="",
                platform="urn:li:dataPlatform:datahub",  # as DataHub's contract SDK has it
                version=0,
                hash="",
                platformSchema=SchemalessClass(),  # type: ignore[no-untyped-call]
                fields=[_schema_field(f) for f in found.fields],
            ),
            compatibility=found.compatibility,
        )
    elif isinstance(found, FieldValues):
        out["fieldAssertion"] = FieldAssertionInfoClass(
            type=FieldAssertionTypeClass.FIELD_VALUES,
            entity=dataset,
            fieldValuesAssertion=FieldValuesAssertionClass(
                field=_field_spec(found.field),
                operator=found.bounds.operator,
                parameters=_parameters(found.bounds),
                failThreshold=FieldValuesFailThresholdClass(
                    type=found.fail_type, value=found.fail_value
                ),
                excludeNulls=found.exclude_nulls,
                transform=FieldTransformClass(found.transform) if found.transform else None,
            ),
        )
    elif isinstance(found, FieldMetric):
        out["fieldAssertion"] = FieldAssertionInfoClass(
            type=FieldAssertionTypeClass.FIELD_METRIC,
            entity=dataset,
            fieldMetricAssertion=FieldMetricAssertionClass(
                field=_field_spec(found.field),
                metric=found.metric,
                operator=found.bounds.operator,
                parameters=_parameters(found.bounds),
            ),
        )
    else:
        assert isinstance(found, SqlMetric)
        out["sqlAssertion"] = SqlAssertionInfoClass(
            type=SqlAssertionTypeClass.METRIC
            if found.change is None
            else (SqlAssertionTypeClass.METRIC_CHANGE),
            entity=dataset,
            statement=found.statement,
            operator=found.bounds.operator,
            parameters=_required(found.bounds),
            changeType=found.change,
        )
    return out
