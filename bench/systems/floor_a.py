"""Floor (a): one bare aggregation reading the columns the rules read; no verdicts."""

from __future__ import annotations

from typing import Any

from rulesets import columns_of

from systems.floors import bare_aggregation


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from pyspark import __version__

    return f"pyspark {__version__}"


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    bare_aggregation(df, columns_of(rules))
    return {}
