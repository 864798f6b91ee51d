"""Declared column types (ODCS logicalType/physicalType, schema-rules JSON types) against Spark's.

Pure: Spark types arrive as their `simpleString()` (`int`, `decimal(10,2)`, `array<string>`).
Comparison is by family, strict (no implicit coercion: an integer column is not a float one),
plus decimal precision/scale when the declaration gives them.
"""

from __future__ import annotations

import re

import attrs

# Spark simpleString prefix -> family
_SPARK_FAMILY = {
    "tinyint": "integer",
    "smallint": "integer",
    "int": "integer",
    "bigint": "integer",
    "float": "float",
    "double": "float",
    "decimal": "decimal",
    "string": "string",
    "varchar": "string",
    "char": "string",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp",
    "binary": "binary",
    "array": "array",
    "map": "object",
    "struct": "object",
}

# Declared names (lower-cased) -> the families they accept.
_DECLARED: dict[str, frozenset[str]] = {
    # ODCS logical types
    "string": frozenset({"string"}),
    "integer": frozenset({"integer"}),
    "number": frozenset({"integer", "float", "decimal"}),
    "boolean": frozenset({"boolean"}),
    "date": frozenset({"date"}),
    "timestamp": frozenset({"timestamp"}),
    "time": frozenset({"string"}),  # Spark has no time type; times arrive as strings
    "object": frozenset({"object"}),
    "array": frozenset({"array"}),
    # schema-rules JSON (seed 002) and common physical spellings
    "float": frozenset({"float", "decimal"}),
    "datetime": frozenset({"timestamp"}),
    "text": frozenset({"string"}),
    "varchar": frozenset({"string"}),
    "char": frozenset({"string"}),
    "int": frozenset({"integer"}),
    "tinyint": frozenset({"integer"}),
    "smallint": frozenset({"integer"}),
    "bigint": frozenset({"integer"}),
    "long": frozenset({"integer"}),
    "short": frozenset({"integer"}),
    "byte": frozenset({"integer"}),
    "double": frozenset({"float"}),
    "real": frozenset({"float"}),
    "decimal": frozenset({"decimal"}),
    "numeric": frozenset({"decimal"}),
    "bool": frozenset({"boolean"}),
    "timestamp_ntz": frozenset({"timestamp"}),
    "timestamp_ltz": frozenset({"timestamp"}),
    "binary": frozenset({"binary"}),
    "bytes": frozenset({"binary"}),
    "struct": frozenset({"object"}),
    "map": frozenset({"object"}),
    "record": frozenset({"object"}),
    "list": frozenset({"array"}),
}

# Physical type names -> the one Spark type (simpleString) they name. A `physicalType` is compared
# exactly: `int` is not satisfied by a bigint column (a consumer reading it as int would overflow).
_PHYSICAL = {
    "tinyint": "tinyint",
    "byte": "tinyint",
    "smallint": "smallint",
    "short": "smallint",
    "int": "int",
    "integer": "int",
    "bigint": "bigint",
    "long": "bigint",
    "float": "float",
    "real": "float",
    "double": "double",
    "boolean": "boolean",
    "bool": "boolean",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
    "binary": "binary",
    "string": "string",
}

_DECIMAL = re.compile(r"^\s*(?:decimal|numeric)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*$", re.I)


@attrs.frozen
class SparkType:
    family: str
    precision: int | None = None
    scale: int | None = None


def spark_type(simple: str) -> SparkType:
    text = simple.strip().lower()
    base = re.split(r"[<(]", text, maxsplit=1)[0].strip()
    family = _SPARK_FAMILY.get(base, base)
    m = _DECIMAL.match(text)
    if m:
        return SparkType("decimal", int(m.group(1)), int(m.group(2) or 0))
    return SparkType(family)


def known_type(declared: str) -> bool:
    text = declared.strip().lower()
    base = re.split(r"[<(]", text, maxsplit=1)[0].strip()
    return base in _DECLARED


def type_mismatch(
    declared: str,
    actual: str,
    precision: int | None = None,
    scale: int | None = None,
    exact: bool = False,
) -> str | None:
    """None when `actual` (Spark simpleString) satisfies `declared`; else why not.

    By family (logical types, seed 002 types); with `exact` (a declared physical type), scalar
    types must be the very Spark type (aliases such as `long` = `bigint` allowed)."""
    text = declared.strip().lower()
    base = re.split(r"[<(]", text, maxsplit=1)[0].strip()
    accepted = _DECLARED.get(base)
    if accepted is None:
        return f"unknown type {declared!r}"
    found = spark_type(actual)
    if found.family not in accepted:
        return f"expected {declared}, found {actual}"
    actual_base = re.split(r"[<(]", actual.strip().lower(), maxsplit=1)[0].strip()
    if exact and base in _PHYSICAL and _PHYSICAL[base] != actual_base:
        return f"expected physical type {declared}, found {actual}"
    m = _DECIMAL.match(text)
    if m:
        precision = precision if precision is not None else int(m.group(1))
        scale = scale if scale is not None else int(m.group(2) or 0)
    if (precision is not None or scale is not None) and found.family != "decimal":
        return f"expected a decimal with precision {precision} and scale {scale}, found {actual}"
    if found.family == "decimal":
        if precision is not None and found.precision != precision:
            return f"expected precision {precision}, found {actual}"
        if scale is not None and found.scale != scale:
            return f"expected scale {scale}, found {actual}"
    return None


def is_numeric(actual: str) -> bool:
    return spark_type(actual).family in ("integer", "float", "decimal")


def is_temporal(actual: str) -> bool:
    return spark_type(actual).family in ("date", "timestamp")


def is_array(actual: str) -> bool:
    return spark_type(actual).family == "array"
