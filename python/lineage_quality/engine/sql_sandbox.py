"""What a contract's `type: sql` query may do, checked on Spark's ANALYZED plan (not its text).

Contracts are trusted less than code. Text filters are bypassed by comments, quoting and case
(`java_method/**/(`, `` `reflect`( ``), so the check walks what Spark resolved: every plan node and
every expression must be of an allowed kind -- an allow-list, so a function added to Spark later
is refused until it is listed. Nothing calls JVM methods (reflection, static invoke, UDFs of any
language, script transforms); the only data read is the bound dataset's view; and nothing can
multiply rows or values without bound (no generators, `range`, joins, `sequence`,
`array_repeat`, `repeat`, padding, collecting aggregates), so one rule cannot exhaust the
evaluator's memory for every contract after it.
"""

from __future__ import annotations

import re
from typing import Any

# Logical plan nodes (analyzed, Spark 3.5 simple class names).
ALLOWED_NODES = frozenset(
    {
        "Aggregate",
        "Distinct",
        "Deduplicate",
        "Except",
        "Expand",  # GROUPING SETS / ROLLUP / CUBE: a bounded multiple of the rows
        "Filter",
        "GlobalLimit",
        "Intersect",
        "LocalLimit",
        "Offset",
        "OneRowRelation",
        "Project",
        "Sort",
        "SubqueryAlias",
        "Tail",
        "Union",
        "Window",
        "WithCTE",
        "CTERelationDef",
        "CTERelationRef",
        "LocalRelation",  # inline VALUES, bounded by the query's text
    }
)

# Expressions (simple class names). Arithmetic, comparison, logic, conditionals, casts, the usual
# string/date/math functions, aggregates and window functions; nothing that reaches the JVM or
# produces an unbounded value.
ALLOWED_EXPRESSIONS = frozenset(
    {
        # references and constants
        "AttributeReference", "Alias", "Literal", "OuterReference", "NamedLambdaVariable",
        "PrettyAttribute", "KnownNotNull", "KnownFloatingPointNormalized", "SortOrder",
        # arithmetic
        "Add", "Subtract", "Multiply", "Divide", "IntegralDivide", "Remainder", "Pmod",
        "UnaryMinus", "UnaryPositive", "Abs", "Round", "BRound", "Floor", "Ceil", "Sqrt", "Pow",
        "Exp", "Log", "Log10", "Log2", "Logarithm", "Signum", "Greatest", "Least",
        "TryAdd", "TrySubtract", "TryMultiply", "TryDivide", "CheckOverflow",
        "PromotePrecision", "MakeDecimal", "UnscaledValue", "RoundCeil", "RoundFloor",
        # comparison and logic
        "EqualTo", "EqualNullSafe", "LessThan", "LessThanOrEqual", "GreaterThan",
        "GreaterThanOrEqual", "Not", "And", "Or", "In", "InSet", "IsNull", "IsNotNull", "IsNaN",
        "Between",
        # conditionals
        "CaseWhen", "If", "Coalesce", "NullIf", "Nvl", "Nvl2", "IfNull", "NaNvl",
        "AtLeastNNonNulls",
        # casts
        "Cast", "TryCast", "AnsiCast", "UpCast",
        # strings (none that can grow a value without bound)
        "Length", "OctetLength", "BitLength", "Lower", "Upper", "StringTrim", "StringTrimLeft",
        "StringTrimRight", "StringTrimBoth", "Substring", "Left", "Right", "RLike", "Like",
        "ILike", "LikeAll", "NotLikeAll", "LikeAny", "NotLikeAny", "Concat", "ConcatWs",
        "StartsWith", "EndsWith", "Contains", "StringInstr", "StringLocate", "RegExpExtract",
        "RegExpReplace", "StringReplace", "InitCap", "Ascii", "SubstringIndex",
        "FormatNumber", "Levenshtein", "Size", "ArrayContains",
        # dates and times
        "CurrentDate", "CurrentTimestamp", "Now", "CurrentTimeZone", "LocalTimestamp",
        "DateDiff", "DateAdd", "DateSub", "AddMonths", "MonthsBetween", "ToDate", "ParseToDate",
        "ParseToTimestamp", "GetTimestamp", "UnixTimestamp", "ToUnixTimestamp", "FromUnixTime",
        "Year", "Quarter", "Month", "DayOfMonth", "DayOfWeek", "DayOfYear", "WeekDay",
        "WeekOfYear", "Hour", "Minute", "Second", "TruncDate", "TruncTimestamp", "DateFormatClass",
        "TimestampAddYMInterval", "TimeAdd", "DatetimeSub", "SubtractTimestamps", "SubtractDates",
        "MakeDate", "LastDay", "TimestampDiff", "DateFromUnixDate", "UnixDate",
        "SecondsToTimestamp",
        # aggregates and windows
        "AggregateExpression", "Count", "CountIf", "Sum", "TrySum", "Average", "TryAverage", "Min",
        "Max", "MinBy", "MaxBy", "First", "Last", "AnyValue", "StddevSamp", "StddevPop",
        "VarianceSamp", "VariancePop", "Skewness", "Kurtosis", "Corr", "CovSample",
        "CovPopulation", "Percentile", "ApproximatePercentile", "Median", "PercentileCont",
        "PercentileDisc", "HyperLogLogPlusPlus", "BoolAnd", "BoolOr", "BitAndAgg", "BitOrAgg",
        "CountDistinct", "Mode",
        "WindowExpression", "WindowSpecDefinition", "SpecifiedWindowFrame", "UnspecifiedFrame$",
        "UnboundedPreceding$", "UnboundedFollowing$", "CurrentRow$", "RowNumber", "Rank",
        "DenseRank", "PercentRank", "CumeDist", "NTile", "Lag", "Lead", "NthValue",
        # sub-queries (their plans are checked too)
        "ScalarSubquery", "Exists", "ListQuery", "InSubquery",
        # hashing, for distinct-count style checks
        "Murmur3Hash", "XxHash64", "Md5", "Sha1", "Sha2", "Crc32",
        # grouping sets
        "Grouping", "GroupingID",
    }
)  # fmt: skip


class UnsafeQueryError(ValueError):
    pass


def _name(obj: Any) -> str:
    return str(obj.getClass().getSimpleName())


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def check_analyzed(plan: Any, view: str) -> None:
    """Raise UnsafeQueryError unless every node and expression of the analyzed `plan` is
    allowed and the only relation read is the temporary view `view` (the bound dataset)."""
    stack: list[tuple[Any, int]] = [(plan, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > 200:
            raise UnsafeQueryError("query plan too deep")
        name = _name(node)
        if name == "View":
            if _view_name(node) != view.lower():
                raise UnsafeQueryError(
                    "a quality query may read only its dataset ({object}), not other views"
                )
            continue  # the dataset's own plan below it is the bound data, not the query
        if name not in ALLOWED_NODES:
            raise UnsafeQueryError(f"{_describe(name)} is not allowed in a quality query")
        for expression in _seq(node.expressions()):
            _check_expression(expression, view, depth)
        stack.extend((child, depth + 1) for child in _seq(node.children()))


def _check_expression(root: Any, view: str, depth: int) -> None:
    stack = [root]
    while stack:
        expression = stack.pop()
        name = _name(expression)
        if name not in ALLOWED_EXPRESSIONS:
            raise UnsafeQueryError(f"{_describe(name)} is not allowed in a quality query")
        if name in ("ScalarSubquery", "Exists", "ListQuery", "InSubquery"):
            sub = _subquery_plan(expression)
            if sub is not None:
                check_analyzed(sub, view)
        stack.extend(_seq(expression.children()))


def _subquery_plan(expression: Any) -> Any:
    try:
        return expression.plan()
    except Exception:
        return None  # InSubquery: its ListQuery child carries the plan


def _view_name(node: Any) -> str:
    try:
        return str(node.desc().identifier().table()).lower()
    except Exception:
        return ""


_WORDS = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _describe(name: str) -> str:
    """`CallMethodViaReflection` -> `CallMethodViaReflection (call method via reflection)`."""
    clean = name.rstrip("$")
    return f"{clean} ({_WORDS.sub(' ', clean).lower()})"


_ERROR_CLASS = re.compile(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\]")


def safe_error(exc: BaseException) -> str:
    """What a failed query's error may say in a facet: Spark's error class (e.g.
    `UNRESOLVED_COLUMN.WITH_SUGGESTION`) or the exception's type -- never the JVM's message text,
    which can quote file contents, paths or values the query was trying to exfiltrate."""
    text = str(exc)
    found = _ERROR_CLASS.search(text)
    if found:
        return found.group(1)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.getClass().getSimpleName())
        except Exception:
            pass
    return type(exc).__name__
