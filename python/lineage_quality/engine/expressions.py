"""Column expressions held in Python and built in the JVM a whole DataFrame operation at a time.

PySpark builds each function and operator of a Column in its own py4j round trip: the fused
aggregation of 100 rules made ~1,100 of them, ~0.15 s of driver time per evaluation whatever the
data's size. An `Expr` records the same calls (the same JVM method, the same arguments) and
`agg`, `with_columns` and `column` send the whole tree at once to the JVM helper
`lineagequality.ColumnProgram`, which makes those calls there: the columns are the ones PySpark
builds, in one round trip. Without the helper jar (or with `LINEAGE_QUALITY_COLUMN_PROGRAM=0`)
the same calls are made from Python, one round trip each, as PySpark makes them.

Equal subtrees are sent and built once, so a column reference or a literal used by many rules
costs nothing more per rule.
"""

from __future__ import annotations

import base64
import json
import weakref
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from pyspark import SparkContext
from pyspark.sql import Column, DataFrame

try:  # PySpark 4 keeps the classic (py4j) helpers in pyspark.sql.classic
    from pyspark.sql.classic.column import _to_seq  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # PySpark 3.5
    from pyspark.sql.column import _to_seq  # type: ignore[attr-defined,no-redef,unused-ignore]

from lineage_quality.engine.jvm_helpers import jvm_helper

Scalar = bool | int | float | str | bytes | Decimal | None
_JAVA_LONG = 2**63


class Expr:
    """One call: `functions.<name>(*args)` ("f"), `args[0].<name>(*args[1:])` on a Column
    ("m"), or the engine helper's `Class.method(*args)` ("h"). Arguments are Exprs, Python
    literals (passed as py4j passes them) or lists of those."""

    __slots__ = ("args", "kind", "name")

    def __init__(self, kind: str, name: str, args: tuple[Any, ...]) -> None:
        self.kind = kind
        self.name = name
        self.args = args

    def __repr__(self) -> str:
        return f"Expr({self.kind}:{self.name}{self.args!r})"

    def __bool__(self) -> bool:  # as Column: `a and b` is a mistake for `a & b`
        raise ValueError("an Expr has no truth value: use '&', '|' and '~'")

    def _m(self, name: str, *args: Any) -> Expr:
        return Expr("m", name, (self, *args))

    # The operators PySpark's Column maps to these JVM methods (pyspark/sql/column.py).
    def __and__(self, other: Expr) -> Expr:
        return self._m("and", other)

    def __or__(self, other: Expr) -> Expr:
        return self._m("or", other)

    def __invert__(self) -> Expr:
        return Expr("f", "not", (self,))

    def __lt__(self, other: Operand) -> Expr:
        return self._m("lt", other)

    def __le__(self, other: Operand) -> Expr:
        return self._m("leq", other)

    def __gt__(self, other: Operand) -> Expr:
        return self._m("gt", other)

    def __ge__(self, other: Operand) -> Expr:
        return self._m("geq", other)

    def __eq__(self, other: Operand) -> Expr:  # type: ignore[override]
        return self._m("equalTo", other)

    def __ne__(self, other: Operand) -> Expr:  # type: ignore[override]
        return self._m("notEqual", other)

    __hash__ = None  # type: ignore[assignment]

    def __sub__(self, other: Operand) -> Expr:
        return self._m("minus", other)

    def __mul__(self, other: Operand) -> Expr:
        return self._m("multiply", other)

    def __truediv__(self, other: Operand) -> Expr:
        return self._m("divide", other)

    def isNull(self) -> Expr:
        return self._m("isNull")

    def isNotNull(self) -> Expr:
        return self._m("isNotNull")

    def isin(self, values: Sequence[Scalar]) -> Expr:
        return self._m("isin", list(values))

    def cast(self, type_name: str) -> Expr:
        return self._m("cast", type_name)

    def rlike(self, pattern: str) -> Expr:
        return self._m("rlike", pattern)

    def bitwiseAND(self, other: Operand) -> Expr:
        return self._m("bitwiseAND", other)

    def otherwise(self, value: Operand) -> Expr:
        return self._m("otherwise", value)

    def alias(self, name: str) -> Expr:
        return self._m("as", name)


Operand = Expr | Scalar


def function(name: str, *args: Operand) -> Expr:
    """`org.apache.spark.sql.functions.<name>(*args)`."""
    return Expr("f", name, args)


def helper(class_name: str, method: str, *args: Any) -> Expr:
    """The engine helper's static `lineagequality.<class_name>.<method>(*args)`, returning a
    Column; only where `jvm_helper(class_name, ...)` found the class."""
    return Expr("h", f"{class_name}.{method}", args)


# -- the program ----------------------------------------------------------------------------


class _Program:
    """Nodes in build order, each argument tagged with the Java type py4j would pass."""

    def __init__(self) -> None:
        self.nodes: list[list[Any]] = []
        self._index: dict[tuple[Any, ...], int] = {}
        self._seen: dict[int, int] = {}  # id(Expr) -> node, for shared subtrees
        self._keep: list[Expr] = []  # keeps ids in _seen from being reused meanwhile

    def add(self, expr: Expr) -> int:
        for node in _post_order(expr, self._seen):
            args = [self._arg(a) for a in node.args]
            key = (node.kind, node.name, json.dumps(args))
            at = self._index.get(key)
            if at is None:
                at = len(self.nodes)
                self.nodes.append([node.kind, node.name, args])
                self._index[key] = at
            self._seen[id(node)] = at
            self._keep.append(node)
        return self._seen[id(expr)]

    def _arg(self, value: Any) -> list[Any]:
        if isinstance(value, Expr):
            return ["n", self._seen[id(value)]]
        if isinstance(value, list):
            return ["L", [self._arg(v) for v in value]]
        return _literal(value)

    def text(self, out: Sequence[int], names: Sequence[str] = ()) -> str:
        return json.dumps(
            {"nodes": self.nodes, "out": list(out), "names": list(names)},
            ensure_ascii=True,
            allow_nan=False,
        )


def _post_order(root: Expr, done: dict[int, Any]) -> Iterator[Expr]:
    """The nodes under `root` not yet in `done` (by id), each after its arguments; the caller
    enters each one in `done` before taking the next. Without recursion: an OR of many rules'
    conditions is deep."""
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        if ready:
            yield node
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in _children(node.args) if id(c) not in done)


def _children(args: Iterable[Any]) -> list[Expr]:
    found: list[Expr] = []
    for a in args:
        if isinstance(a, Expr):
            found.append(a)
        elif isinstance(a, list):
            found.extend(_children(a))
    return found


def _literal(value: Any) -> list[Any]:
    """A Python value as [tag, JSON value], typed as py4j types it (protocol.get_command_part)."""
    if value is None:
        return ["z", None]
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, Decimal):
        return ["D", str(value)]
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return ["i", value]
        if -_JAVA_LONG <= value < _JAVA_LONG:
            return ["l", value]
        raise ValueError(f"integer {value} does not fit a 64-bit long")
    if isinstance(value, float):
        return ["d", repr(value)]  # repr round-trips exactly; 'nan', 'inf', '-inf' named
    if isinstance(value, (bytes, bytearray)):
        return ["y", base64.b64encode(bytes(value)).decode("ascii")]
    if isinstance(value, str):
        return ["s", value]
    raise TypeError(f"not a literal Spark takes: {type(value).__name__}")


# -- running it ------------------------------------------------------------------------------


# Jackson, which parses the program in the JVM, refuses a string of more than 20 M characters
# (Spark 3.5 ships 2.15.2): a program that long (a huge value list) is built the eager way,
# which takes any size and costs little next to such a program.
MAX_PROGRAM_CHARS = 16_000_000


def _program(columns: Sequence[Expr], names: Sequence[str] = ()) -> tuple[Any, str] | None:
    """The helper and the program's text, or None where the calls are made from Python."""
    builder = jvm_helper("ColumnProgram", "COLUMN_PROGRAM")
    if builder is None:
        return None
    program = _Program()
    out = [program.add(c) for c in columns]
    text = program.text(out, names)
    return (builder, text) if len(text) <= MAX_PROGRAM_CHARS else None


def agg(df: DataFrame, columns: Sequence[Expr]) -> DataFrame:
    """`df.agg(*columns)`."""
    found = _program(columns)
    if found is None:
        return df.agg(*_eager(columns))
    builder, text = found
    return DataFrame(builder.agg(df._jdf, text), df.sparkSession)


def with_columns(df: DataFrame, columns: dict[str, Expr]) -> DataFrame:
    """`df.withColumns(columns)`."""
    if not columns:
        return df
    found = _program(list(columns.values()), list(columns))
    if found is None:
        return df.withColumns(dict(zip(columns, _eager(list(columns.values())), strict=True)))
    builder, text = found
    return DataFrame(builder.withColumns(df._jdf, text), df.sparkSession)


def column(expr: Expr) -> Column:
    """The Column `expr` describes (for a filter, a select)."""
    found = _program([expr])
    if found is None:
        return _eager([expr])[0]
    builder, text = found
    return Column(builder.column(text))


# Without the helper: the calls from Python, one round trip each, members looked up once per
# SparkContext (a lookup is a round trip of its own).
_members: dict[str, Any] = {}
_owner: list[weakref.ref[SparkContext]] = []


def _member(owner: str, name: str) -> Any:
    sc = SparkContext._active_spark_context
    assert sc is not None, "no active SparkContext"
    if not _owner or _owner[0]() is not sc:  # a new context: its gateway knows none of them
        _members.clear()
        _owner[:] = [weakref.ref(sc)]
    key = f"{owner}.{name}"
    member = _members.get(key)
    if member is None:
        jvm: Any = sc._jvm
        target = jvm.org.apache.spark.sql.functions if owner == "f" else jvm.lineagequality
        if owner != "f":
            target = getattr(target, owner)
        member = getattr(target, name)
        _members[key] = member
    return member


def _eager(columns: Sequence[Expr]) -> list[Column]:
    sc = SparkContext._active_spark_context
    assert sc is not None, "no active SparkContext"
    built: dict[int, Any] = {}
    keep: list[Expr] = []

    def value(a: Any, node: Expr) -> Any:
        if isinstance(a, Expr):
            return built[id(a)]
        if isinstance(a, list) and node.kind in ("m", "f"):
            # as Column.isin passes its values, and a function its columns (`least`): a Seq of
            # columns, literals made literal columns (the same expressions)
            lit = _member("f", "lit")
            return _to_seq(sc, [built[id(v)] if isinstance(v, Expr) else lit(v) for v in a])
        if isinstance(a, list):  # a helper's list: py4j converts it to a java.util.List
            return [built[id(v)] if isinstance(v, Expr) else v for v in a]
        return a

    for root in columns:
        for node in _post_order(root, built):
            args = [value(a, node) for a in node.args]
            if node.kind == "f":
                jc = _member("f", node.name)(*args)
            elif node.kind == "m":
                jc = getattr(args[0], node.name)(*args[1:])
            else:
                owner, method = node.name.split(".", 1)
                jc = _member(owner, method)(*args)
            built[id(node)] = jc
            keep.append(node)
    return [Column(built[id(c)]) for c in columns]
