"""Column references that Spark reads literally, whatever characters a name holds."""

from __future__ import annotations

from lineage_quality.engine import functions as F
from lineage_quality.engine.expressions import Expr


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def col(name: str) -> Expr:
    """The column `name` (a dot or a backtick in it is part of the name)."""
    return F.col(quote(name))


def is_not_null(name: str) -> Expr:
    """`col(name).isNotNull()`."""
    return col(name).isNotNull()
