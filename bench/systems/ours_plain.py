"""lineage-quality with its JVM helpers off (pattern DFA, shared value codes, row gates, hashed
uniqueness, null counts and integer bounds from Parquet footers, value tests on Parquet
dictionaries, expressions built in one call): the engine on the same built-in Spark expressions
as floor (b) (`rlike`, `IN`, `groupBy`), built call by call as PySpark builds them, reading the
same columns, so ours_plain / floor (b) is the engine's own overhead on equal expressions."""

from __future__ import annotations

import os
from typing import Any

from systems import ours

HELPERS = (
    "PATTERN_DFA", "VALUE_CODES", "ROW_GATES", "KEY_HASHES", "FOOTER_NULLS", "FOOTER_BOUNDS",
    "DICTIONARY_VALUES", "COLUMN_PROGRAM",
)  # fmt: skip

conf = ours.conf
version = ours.version


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    for helper in HELPERS:
        os.environ[f"LINEAGE_QUALITY_{helper}"] = "0"
    return ours.run(spark, df, rules)
