"""Floor (a): one bare aggregation reading the columns the rules read; no verdicts."""

from __future__ import annotations

from typing import Any

from rulesets import columns_of

from systems.floors import bare_aggregation, conf, version

__all__ = ["conf", "run", "version"]


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    bare_aggregation(df, columns_of(rules))
    return {}
