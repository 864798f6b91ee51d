"""lineage-quality's engine: `evaluate_dataframe`, the call the producer makes per dataset."""

from __future__ import annotations

from typing import Any

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.evaluation.session import EVALUATION_SQL_CONF, engine_jar
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold

_STAT = {"mean": "avg", "min": "min", "max": "max", "stddev": "stddev", "sum": "sum"}


def conf() -> dict[str, str]:
    # the semantics and the helper jar the producer evaluates with (evaluator_session)
    settings = dict(EVALUATION_SQL_CONF)
    jar = engine_jar()
    if jar is None:
        raise RuntimeError("the engine jar is missing: make jars (SPARK=3.5|4)")
    settings["spark.jars"] = str(jar)
    return settings


def version() -> str:
    from importlib.metadata import version as v

    return f"lineage-quality {v('lineage-quality')}"


def _bounds(spec: dict[str, Any]) -> Threshold:
    low, high = spec.get("min"), spec.get("max")
    if low is not None and high is not None:
        return Threshold(Operator.BETWEEN, low, high)
    if low is not None:
        return Threshold(Operator.GREATER_OR_EQUAL, low)
    return Threshold(Operator.LESS_OR_EQUAL, high)


def to_rule(spec: dict[str, Any]) -> Rule:
    zero = Threshold(Operator.MUST_BE, 0)
    kind, rid = spec["kind"], spec["id"]
    column = [spec["column"]] if "column" in spec else []
    if kind == "row_count":
        return Rule(id=rid, kind=RuleKind.ROW_COUNT, threshold=_bounds({"min": spec["min"]}))
    if kind == "not_null":
        return Rule(id=rid, kind=RuleKind.NULL_VALUES, columns=column, threshold=zero)
    if kind == "accepted":
        return Rule(
            id=rid, kind=RuleKind.INVALID_VALUES, columns=column,
            valid_values=spec["values"], threshold=zero,
        )  # fmt: skip
    if kind == "pattern":
        return Rule(
            id=rid, kind=RuleKind.INVALID_VALUES, columns=column, pattern=spec["regex"],
            threshold=zero,
        )  # fmt: skip
    if kind == "range":
        return Rule(
            id=rid, kind=RuleKind.VALUE_RANGE, columns=column, min_value=spec["min"],
            max_value=spec["max"], threshold=zero,
        )  # fmt: skip
    if kind == "stat":
        return Rule(
            id=rid, kind=RuleKind.STATISTIC, columns=column, statistic=_STAT[spec["stat"]],
            threshold=_bounds(spec),
        )  # fmt: skip
    assert kind == "unique", kind
    return Rule(id=rid, kind=RuleKind.DUPLICATE_VALUES, columns=spec["columns"], threshold=zero)


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    results = evaluate_dataframe(df, [to_rule(r) for r in rules])
    out: dict[str, bool | None] = {}
    for result in results:
        if result.status.name == "ERROR":
            raise RuntimeError(f"{result.rule.id}: {result.message}")
        out[result.rule.id] = result.success
    return out
