"""`type: sql` quality checks: a read-only query on the dataset, registered as a temporary view.

The query is parsed first and refused unless every node of its parsed plan is a query node (no
commands, inserts, DDL, SET, CACHE... which Spark would run while analyzing); then its analyzed
plan must pass `sql_sandbox.check_analyzed` (allowed nodes and expressions only, reading only the
dataset's view) before anything runs. Errors carry Spark's error class, never the JVM's text.
Placeholders `{object}` / `${object}` / `{table}` become the
view's name and `{property}` / `${property}` / `{column}` the rule's column, both quoted.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from pyspark.sql import DataFrame

from lineage_quality.engine.sql_sandbox import UnsafeQueryError, check_analyzed, safe_error
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.results import Cause, RuleResult, error_result
from lineage_quality.rules import Rule

# Logical plan nodes a SELECT may parse into (Spark 3.5 class simple names).
_QUERY_NODES = frozenset(
    {
        "Aggregate",
        "Distinct",
        "Except",
        "Expand",
        "Filter",
        "Generate",
        "GlobalLimit",
        "Intersect",
        "Join",
        "LateralJoin",
        "LocalLimit",
        "Offset",
        "OneRowRelation",
        "Pivot",
        "Project",
        "Range",
        "Repartition",
        "RepartitionByExpression",
        "Sample",
        "Sort",
        "SubqueryAlias",
        "Tail",
        "Union",
        "UnresolvedHaving",
        "UnresolvedHint",
        "UnresolvedInlineTable",
        "UnresolvedRelation",
        "UnresolvedSubqueryColumnAliases",
        "UnresolvedTableValuedFunction",
        "UnresolvedWith",
        "Window",
        "WithCTE",
        "CTERelationDef",
        "CTERelationRef",
        "LocalRelation",
        "Deduplicate",
        "WithWindowDefinition",
        "UnresolvedTVFAliases",
        "Unpivot",
    }
)

_OBJECT = re.compile(r"\$?\{(object|table)\}")
_PROPERTY = re.compile(r"\$?\{(property|column)\}")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def render(query: str, view: str, column: str | None) -> str:
    text = _OBJECT.sub(_quote(view), query)
    if _PROPERTY.search(text):
        if column is None:
            raise ValueError("the query uses {property} but the rule has no column")
        text = _PROPERTY.sub(_quote(column), text)
    return text.strip().rstrip(";")


def _walk(plan: Any, depth: int = 0) -> None:
    name = plan.getClass().getSimpleName()
    if name not in _QUERY_NODES:
        raise UnsafeQueryError(f"only read-only queries are allowed, found {name}")
    if depth > 200:
        raise UnsafeQueryError("query plan too deep")
    children = plan.children()
    for i in range(children.size()):
        _walk(children.apply(i), depth + 1)


def check_read_only(spark: Any, query: str) -> None:
    """Parse without running; raise UnsafeQueryError for anything but a query."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        plan = parser.parsePlan(query)
    except Exception as exc:
        raise UnsafeQueryError(f"query does not parse: {safe_error(exc)}") from exc
    _walk(plan)


def run_sql_rule(df: DataFrame, rule: Rule, row_count: int) -> RuleResult:
    spark = df.sparkSession
    view = f"lq_{uuid.uuid4().hex}"
    try:
        query = render(rule.query or "", view, rule.column)
        check_read_only(spark, query)
    except ValueError as exc:
        return error_result(rule, str(exc), Cause.INVALID_RULE)
    df.createOrReplaceTempView(view)
    try:
        try:
            checked = spark.sql(query)  # analyzed here, not run
        except Exception as exc:
            return error_result(rule, f"query failed: {safe_error(exc)}", Cause.QUERY_FAILED)
        try:
            check_analyzed(checked._jdf.queryExecution().analyzed(), view)
        except UnsafeQueryError as exc:
            return error_result(rule, str(exc), Cause.INVALID_RULE)
        try:
            row = checked.first()
        except Exception as exc:  # a failing check is an error result
            return error_result(rule, f"query failed: {safe_error(exc)}", Cause.QUERY_FAILED)
    finally:
        spark.catalog.dropTempView(view)
    if row is None or len(row) == 0:
        return error_result(rule, "query returned no row", Cause.QUERY_FAILED)
    value = row[0]
    if value is not None and not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return error_result(rule, f"query returned {value!r}, not a number", Cause.QUERY_FAILED)
    return value_verdict(rule, value, row_count)
