"""Soda Core as configured by default: failed-row samples collected for the checks that fail."""

from __future__ import annotations

from typing import Any

from systems.soda import conf, scan, version

__all__ = ["conf", "run", "version"]


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return scan(spark, df, rules, samples=True)
