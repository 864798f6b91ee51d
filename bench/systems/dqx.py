"""Databricks Labs DQX, run locally: DQEngine with a stand-in WorkspaceClient (as DQX's own unit
tests do; nothing here calls the workspace), `apply_checks_by_metadata` with a row-level or
aggregate check per rule (a bounded statistic is two checks), then the verdicts read as a user
reads DQX output: one aggregation counting, per check name, the rows whose `_errors` carry it."""

from __future__ import annotations

from typing import Any


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from importlib.metadata import version as v

    return f"databricks-labs-dqx {v('databricks-labs-dqx')}"


def _check(name: str, function: str, **arguments: Any) -> dict[str, Any]:
    return {
        "name": name,
        "criticality": "error",
        "check": {"function": function, "arguments": arguments},
    }


def checks_for(r: dict[str, Any]) -> list[dict[str, Any]]:
    kind, c, rid = r["kind"], r.get("column"), r["id"]
    if kind == "row_count":
        return [_check(rid, "is_aggr_not_less_than", column="*", limit=r["min"], aggr_type="count")]
    if kind == "not_null":
        return [_check(rid, "is_not_null", column=c)]
    if kind == "accepted":
        # in metadata, a string is an SQL expression: literals are written quoted
        allowed = ["'" + v.replace("'", "''") + "'" for v in r["values"]]
        return [_check(rid, "is_in_list", column=c, allowed=allowed)]
    if kind == "pattern":
        return [_check(rid, "regex_match", column=c, regex=r["regex"])]
    if kind == "range":
        if r["min"] is not None and r["max"] is not None:
            return [_check(rid, "is_in_range", column=c, min_limit=r["min"], max_limit=r["max"])]
        if r["min"] is not None:
            return [_check(rid, "is_not_less_than", column=c, limit=r["min"])]
        return [_check(rid, "is_not_greater_than", column=c, limit=r["max"])]
    if kind == "stat":
        aggr = {"mean": "avg", "stddev": "stddev_samp"}.get(r["stat"], r["stat"])
        out = []
        if r["min"] is not None:
            out.append(
                _check(
                    f"{rid}_lo", "is_aggr_not_less_than", column=c, limit=r["min"], aggr_type=aggr
                )
            )
        if r["max"] is not None:
            out.append(
                _check(
                    f"{rid}_hi",
                    "is_aggr_not_greater_than",
                    column=c,
                    limit=r["max"],
                    aggr_type=aggr,
                )
            )
        return out
    return [_check(rid, "is_unique", columns=r["columns"])]


def _named(name: str) -> Any:
    return lambda e: e["name"] == name


_ENGINE: Any = None


def _engine(spark: Any) -> Any:
    global _ENGINE
    if _ENGINE is None:
        from unittest.mock import MagicMock

        from databricks.labs.dqx.engine import DQEngine

        _ENGINE = DQEngine(MagicMock(), spark=spark)
    return _ENGINE


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    from pyspark.sql import functions as F

    checks = [c for r in rules for c in checks_for(r)]
    checked = _engine(spark).apply_checks_by_metadata(df, checks)
    names = [c["name"] for c in checks]
    row = checked.agg(
        *[F.count_if(F.exists("_errors", _named(n))).alias(f"c{i}") for i, n in enumerate(names)]
    ).first()
    failed = {n for n, count in zip(names, row, strict=True) if count}
    return {
        r["id"]: not any(n == r["id"] or n.startswith(r["id"] + "_") for n in failed) for r in rules
    }
