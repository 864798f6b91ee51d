"""An append judged on its own rows, merged with the kept states of the version before it, gives
the verdicts and numbers a whole scan of the table gives (engine/increment.py, engine/states.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_quality.engine.increment import (
    evaluate_increment,
    evaluate_keeping_states,
    keys_already_there,
)
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.engine.states import States
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold, Unit

pytestmark = pytest.mark.spark

SCHEMA = "id BIGINT, uid STRING, email STRING, amount DOUBLE, qty INT"


def _rows(start: int, count: int, dup_every: int = 0) -> list[tuple[Any, ...]]:
    out = []
    for i in range(start, start + count):
        key = i - 1 if dup_every and i % dup_every == 0 else i  # a repeated id now and then
        email = None if i % 7 == 0 else (f"u{i}@x.io" if i % 5 else f"bad{i}")
        amount = None if i % 11 == 0 else (i % 97) * 1.25 - 30.0
        out.append((key, f"u-{(i * 7919) % 1000}", email, amount, i % 13))
    return out


def _rules() -> list[Rule]:
    zero = Threshold(Operator.MUST_BE, 0)
    return [
        Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        Rule(
            id="email_nulls",
            kind=RuleKind.NULL_VALUES,
            columns=("email",),
            threshold=Threshold(Operator.LESS_THAN, 10),
            unit=Unit.PERCENT,
        ),
        Rule(
            id="email_pattern",
            kind=RuleKind.INVALID_VALUES,
            columns=("email",),
            pattern=r"^[a-z0-9]+@[a-z]+\.io$",
            threshold=zero,
        ),
        Rule(id="id_unique", kind=RuleKind.DUPLICATE_VALUES, columns=("id",), threshold=zero),
        Rule(id="uid_unique", kind=RuleKind.DUPLICATE_VALUES, columns=("uid",), threshold=zero),
        Rule(
            id="amount_range",
            kind=RuleKind.VALUE_RANGE,
            columns=("amount",),
            min_value=-10,
            threshold=zero,
        ),
        *(
            Rule(
                id=f"amount_{s}",
                kind=RuleKind.STATISTIC,
                columns=("amount",),
                statistic=s,
                threshold=Threshold(Operator.LESS_THAN, 1000),
            )
            for s in ("avg", "sum", "min", "max", "stddev")
        ),
        Rule(
            id="qty_sum",
            kind=RuleKind.STATISTIC,
            columns=("qty",),
            statistic="sum",
            threshold=Threshold(Operator.GREATER_THAN, 0),
        ),
    ]


def _same(merged: list[RuleResult], whole: list[RuleResult]) -> None:
    for m, w in zip(merged, whole, strict=True):
        assert (m.rule.id, m.status, m.failing_rows, m.row_count) == (
            w.rule.id,
            w.status,
            w.failing_rows,
            w.row_count,
        )
        if isinstance(w.actual, float):
            assert m.actual == pytest.approx(w.actual, rel=1e-9, abs=1e-9), m.rule.id
        else:
            assert m.actual == w.actual, m.rule.id
    mm, wm = merged[0].measures, whole[0].measures
    assert mm is not None and wm is not None and mm.rows == wm.rows


def test_appends_merged_from_states_equal_a_whole_scan(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "orders")
    spark.createDataFrame(_rows(0, 3000, dup_every=500), SCHEMA).write.parquet(path)
    rules = _rules()
    first = spark.read.parquet(path)
    _, states = evaluate_keeping_states(first, rules, profile=True)
    assert states is not None
    # states survive a round trip through their stored text
    states = States.from_json(states.to_json())
    assert states is not None
    for step, start in enumerate((3000, 4000)):
        before = spark.read.parquet(path)
        before_files = set(before.inputFiles())
        spark.createDataFrame(_rows(start, 1000, dup_every=300), SCHEMA).write.mode(
            "append"
        ).parquet(path)
        table = spark.read.parquet(path)
        added = spark.read.parquet(*[f for f in table.inputFiles() if f not in before_files])
        merged = evaluate_increment(added, lambda b=before: b, rules, True, states)
        assert merged is not None
        results, states = merged
        assert states.merged == step + 1
        _same(results, evaluate_dataframe(table, rules, profile=True))
        assert any(not r.success for r in results)  # the pattern and duplicates fail


def test_a_key_repeated_across_the_append_counts(spark: Any) -> None:
    before = spark.createDataFrame([(i,) for i in range(100)], "id BIGINT")
    added = spark.createDataFrame([(5,), (5,), (99,), (100,), (None,)], "id BIGINT")
    assert keys_already_there(added, before, ["id"]) == 2  # 5 and 99; a null key is no key


def test_no_merge_where_a_measure_has_no_state(spark: Any) -> None:
    df = spark.createDataFrame(_rows(0, 100), SCHEMA)
    median = Rule(
        id="median",
        kind=RuleKind.STATISTIC,
        columns=("amount",),
        statistic="median",
        threshold=Threshold(Operator.LESS_THAN, 100),
    )
    results, states = evaluate_keeping_states(df, [median], profile=False)
    assert states is None and len(results) == 1
    kept = States(rows=100)
    assert evaluate_increment(df, lambda: df, [median], False, kept) is None


def test_no_merge_when_the_rules_changed(spark: Any) -> None:
    df = spark.createDataFrame(_rows(0, 100), SCHEMA)
    _, states = evaluate_keeping_states(df, _rules()[:2], profile=False)
    assert states is not None
    assert evaluate_increment(df, lambda: df, _rules(), False, states) is None
