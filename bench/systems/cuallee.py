"""cuallee: one Check with a rule per rule, `check.validate(df)` collected. cuallee states a
statistic only as equal to a value (has_mean, has_max, ...) and has no minimum row count, so
those rules are reported as not expressible (None)."""

from __future__ import annotations

from typing import Any


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from importlib.metadata import version as v

    return f"cuallee {v('cuallee')}"


def _call(r: dict[str, Any]) -> tuple[str, tuple[Any, ...]] | None:
    kind, c = r["kind"], r.get("column")
    if kind == "not_null":
        return "is_complete", (c,)
    if kind == "accepted":
        return "is_contained_in", (c, tuple(r["values"]))
    if kind == "pattern":
        return "has_pattern", (c, r["regex"])
    if kind == "range":
        if r["min"] is not None and r["max"] is not None:
            return "is_between", (c, (r["min"], r["max"]))
        if r["min"] is not None:
            return "is_greater_or_equal_than", (c, r["min"])
        return "is_less_or_equal_than", (c, r["max"])
    if kind == "unique":
        cols = r["columns"]
        return ("is_unique", (cols[0],)) if len(cols) == 1 else ("are_unique", (tuple(cols),))
    return None


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    from cuallee import Check, CheckLevel

    check = Check(CheckLevel.ERROR, "bench")
    keys: dict[str, str] = {}
    for r in rules:
        call = _call(r)
        if call is None:
            continue
        getattr(check, call[0])(*call[1])
        one = Check(CheckLevel.ERROR, "key")  # the rule's key (cuallee merges equal rules)
        getattr(one, call[0])(*call[1])
        keys[r["id"]] = next(iter(one._rule))
    rows = check.validate(df).collect()
    order = list(check._rule)
    status = {order[row["id"] - 1]: row["status"] == "PASS" for row in rows}
    return {r["id"]: status.get(keys[r["id"]]) if r["id"] in keys else None for r in rules}
