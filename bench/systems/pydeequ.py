"""PyDeequ (Deequ's Scala engine): one VerificationSuite, one Check per rule (Deequ runs the
analyzers of all checks together), rule id as the check's name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("SPARK_VERSION", "3.5")
JARS = Path(__file__).resolve().parents[1] / ".peers" / "jars"


def conf() -> dict[str, str]:
    jars = sorted(JARS.glob("deequ-*.jar"))
    if not jars:
        raise RuntimeError(f"no Deequ jar in {JARS} (make bench fetches it)")
    return {"spark.jars": ",".join(str(j) for j in jars)}


def version() -> str:
    from importlib.metadata import version as v

    jar = next(iter(sorted(JARS.glob("deequ-*.jar"))), None)
    return f"pydeequ {v('pydeequ')}, {jar.name if jar else 'no jar'}"


def _between(low: Any, high: Any) -> Any:
    return lambda x: (low is None or x >= low) and (high is None or x <= high)


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    from pydeequ.checks import Check, CheckLevel
    from pydeequ.verification import VerificationResult, VerificationSuite

    suite = VerificationSuite(spark).onData(df)
    for r in rules:
        check = Check(spark, CheckLevel.Error, r["id"])
        kind = r["kind"]
        c = r.get("column")
        if kind == "row_count":
            low = r["min"]
            check = check.hasSize(lambda n, low=low: n >= low)
        elif kind == "not_null":
            check = check.isComplete(c)
        elif kind == "accepted":
            check = check.isContainedIn(c, r["values"])
        elif kind == "pattern":
            check = check.hasPattern(c, r["regex"], lambda x: x == 1.0)
        elif kind == "range":
            parts = [f"`{c}` IS NULL"]
            bounds = []
            if r["min"] is not None:
                bounds.append(f"`{c}` >= {r['min']}")
            if r["max"] is not None:
                bounds.append(f"`{c}` <= {r['max']}")
            parts.append("(" + " AND ".join(bounds) + ")")
            check = check.satisfies(" OR ".join(parts), r["id"], lambda x: x == 1.0)
        elif kind == "stat":
            method = {
                "mean": check.hasMean, "min": check.hasMin, "max": check.hasMax,
                "stddev": check.hasStandardDeviation, "sum": check.hasSum,
            }[r["stat"]]  # fmt: skip
            check = method(c, _between(r["min"], r["max"]))
        else:  # unique
            if len(r["columns"]) == 1:
                check = check.isUnique(r["columns"][0])
            else:
                check = check.hasUniqueness(r["columns"], lambda x: x == 1.0)
        suite = suite.addCheck(check)
    result = suite.run()
    rows = VerificationResult.checkResultsAsDataFrame(spark, result).collect()
    verdicts: dict[str, bool | None] = {}
    for row in rows:
        ok = row["constraint_status"] == "Success"
        verdicts[row["check"]] = verdicts.get(row["check"], True) and ok
    return verdicts
