"""`type: sql` quality checks: a read-only query on the dataset, registered as a temporary view.

The query is parsed first and refused unless every node of its plan is a query node (no
commands, inserts, DDL, SET, CACHE...) and it calls no JVM method (`reflect`, `java_method`); the
evaluator's session also turns off SQL on files (`parquet.`/path``), so a query reads the dataset
and the catalog's tables, nothing else. Placeholders `{object}` / `${object}` / `{table}` become the
view's name and `{property}` / `${property}` / `{column}` the rule's column, both quoted.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from pyspark.sql import DataFrame

from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.results import RuleResult, error_result
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
# Functions that call arbitrary JVM methods: a quality check has no business doing that.
_JVM_CALLS = re.compile(r"\b(reflect|try_reflect|java_method)\s*\(", re.I)
_PROPERTY = re.compile(r"\$?\{(property|column)\}")


class UnsafeQueryError(ValueError):
    pass


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
    found = _JVM_CALLS.search(query)
    if found:
        raise UnsafeQueryError(f"{found.group(1)}() is not allowed in a quality query")
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        plan = parser.parsePlan(query)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        raise UnsafeQueryError(f"query does not parse: {text[0] if text else exc}") from exc
    _walk(plan)


def run_sql_rule(df: DataFrame, rule: Rule, row_count: int) -> RuleResult:
    spark = df.sparkSession
    view = f"lq_{uuid.uuid4().hex}"
    try:
        query = render(rule.query or "", view, rule.column)
        check_read_only(spark, query)
    except ValueError as exc:
        return error_result(rule, str(exc))
    df.createOrReplaceTempView(view)
    try:
        row = spark.sql(query).first()
    except Exception as exc:  # a failing check is an error result
        text = str(exc).strip().splitlines()
        return error_result(rule, f"query failed: {text[0][:300] if text else exc}")
    finally:
        spark.catalog.dropTempView(view)
    if row is None or len(row) == 0:
        return error_result(rule, "query returned no row")
    value = row[0]
    if value is not None and not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return error_result(rule, f"query returned {value!r}, not a number")
    return value_verdict(rule, value, row_count)
