"""Soda Core (soda-core-spark-df): one Scan over a temp view, every rule a SodaCL check named
after its rule id, with `samples limit: 0` so no failed-row sample query runs."""

from __future__ import annotations

import json
from typing import Any

SAMPLED = ("not_null", "accepted", "pattern", "range", "unique")


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from importlib.metadata import version as v

    return f"soda-core-spark-df {v('soda-core-spark-df')}"


def _q(value: Any) -> str:
    return json.dumps(value)  # a JSON scalar or list is valid YAML


def _bounds(metric: str, low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f"{metric} between {low} and {high}"
    return f"{metric} >= {low}" if low is not None else f"{metric} <= {high}"


def sodacl(rules: list[dict[str, Any]], samples: bool) -> str:
    lines = ["checks for orders:"]
    for r in rules:
        kind, c = r["kind"], r.get("column")
        config = [f"name: {r['id']}"]
        if kind == "row_count":
            check = f"row_count >= {r['min']}"
        elif kind == "not_null":
            check = f"missing_count({c}) = 0"
        elif kind == "accepted":
            check = f"invalid_count({c}) = 0"
            config.append(f"valid values: {_q(r['values'])}")
        elif kind == "pattern":
            check = f"invalid_count({c}) = 0"
            config.append(f"valid regex: {_q(r['regex'])}")
        elif kind == "range":
            check = f"invalid_count({c}) = 0"
            if r["min"] is not None:
                config.append(f"valid min: {r['min']}")
            if r["max"] is not None:
                config.append(f"valid max: {r['max']}")
        elif kind == "stat":
            if r["stat"] == "stddev":  # no built-in metric: SodaCL's user-defined expression
                check = _bounds(f"stddev_{r['id']}", r["min"], r["max"])
                config.append(f"stddev_{r['id']} expression: STDDEV_SAMP({c})")
            else:
                metric = {"mean": "avg"}.get(r["stat"], r["stat"])
                check = _bounds(f"{metric}({c})", r["min"], r["max"])
        else:
            check = f"duplicate_count({', '.join(r['columns'])}) = 0"
        if not samples and kind in SAMPLED:
            config.append("samples limit: 0")
        lines.append(f"  - {check}:")
        lines += [f"      {line}" for line in config]
    return "\n".join(lines) + "\n"


def scan(spark: Any, df: Any, rules: list[dict[str, Any]], samples: bool) -> dict[str, Any]:
    from soda.scan import Scan

    df.createOrReplaceTempView("orders")
    s = Scan()
    s.set_scan_definition_name("bench")
    s.set_data_source_name("spark_df")
    s.add_spark_session(spark, data_source_name="spark_df")
    s.add_sodacl_yaml_str(sodacl(rules, samples))
    s.execute()
    if s.has_error_logs():
        raise RuntimeError(s.get_error_logs_text())
    verdicts: dict[str, bool | None] = {r["id"]: None for r in rules}
    for check in s.get_scan_results()["checks"]:
        verdicts[check["name"]] = check["outcome"] == "pass"
    return verdicts


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return scan(spark, df, rules, samples=False)
