"""Floor (b): the rules' metrics written by hand as ONE aggregation (uniqueness excluded: it
cannot be part of a global aggregation). Its verdicts are checked like any system's."""

from __future__ import annotations

from typing import Any

from systems.floors import conf, version

__all__ = ["conf", "run", "version"]


def _within(value: Any, low: Any, high: Any) -> bool:
    return value is not None and (low is None or value >= low) and (high is None or value <= high)


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    from pyspark.sql import functions as F

    stat = {"mean": F.avg, "min": F.min, "max": F.max, "stddev": F.stddev_samp, "sum": F.sum}
    columns = []
    measured = []
    for r in rules:
        kind = r["kind"]
        c = F.col(r["column"]) if "column" in r else None
        if kind == "row_count":
            columns.append(F.count(F.lit(1)))
        elif kind == "not_null":
            columns.append(F.count_if(c.isNull()))
        elif kind == "accepted":
            columns.append(F.count_if(~c.isin(r["values"])))
        elif kind == "pattern":
            columns.append(F.count_if(~c.rlike(r["regex"])))
        elif kind == "range":
            out = F.lit(False)
            if r["min"] is not None:
                out = out | (c < r["min"])
            if r["max"] is not None:
                out = out | (c > r["max"])
            columns.append(F.count_if(out))
        elif kind == "stat":
            columns.append(stat[r["stat"]](c))
        else:
            continue
        measured.append(r)
    row = df.agg(*columns).first()
    verdicts: dict[str, bool | None] = {}
    for r, value in zip(measured, row, strict=True):
        if r["kind"] == "row_count":
            verdicts[r["id"]] = value >= r["min"]
        elif r["kind"] == "stat":
            verdicts[r["id"]] = _within(value, r["min"], r["max"])
        else:
            verdicts[r["id"]] = value == 0
    return verdicts
