"""Which rows a row-level rule counted as failing: the engine's own per-row predicate
(`failing_condition`) of each rule's metric, as a Spark column. The quarantine (quarantine.py)
writes those rows aside and the samples (samples.py) show a few of them, so both show exactly
the rows the verdict counted."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs
from pyspark.sql import Column, DataFrame

from lineage_quality.engine.analyzers import failing_condition
from lineage_quality.engine.expressions import column
from lineage_quality.engine.plan import build_plan
from lineage_quality.rules import Rule


@attrs.frozen
class FailingRows:
    """One rule's failing rows: `where` holds on them. `columns`: the dataset columns the rule
    judges (its offending values), or the key columns of a duplicate-key rule (`grouped`)."""

    rule: Rule
    where: Column | None
    columns: tuple[str, ...]
    grouped: bool = False


def failing_rows(
    df: DataFrame, rules: Sequence[Rule], now: float, grouped: bool = False
) -> Iterator[FailingRows]:
    """The failing rows of each rule of `rules` that judges rows one at a time (not row counts,
    statistics or SQL rules); with `grouped`, the duplicate-key rules' key columns too."""
    schema = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    plan = build_plan(rules, schema)
    for step in plan.steps:
        if step.metric is not None:
            metric = plan.metrics[step.metric]
            condition = failing_condition(metric, now)
            if condition is None:
                continue  # rowCount, statistics: no row fails on its own
            own = (metric.column,) if metric.column else ()
            yield FailingRows(step.rule, column(condition), own)
        elif grouped and step.key_set is not None:
            yield FailingRows(step.rule, None, plan.key_sets[step.key_set], grouped=True)
