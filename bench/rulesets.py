"""The benchmark's rule sets, in a neutral form every system's adapter translates.

Pure Python with no dependencies: it is imported by the harness (our virtualenv) and by each
peer's worker (the peer's own virtualenv).

A rule is a dict with an `id`, a `kind` and the kind's fields. Every rule states "no offending
row" (or "the statistic lies within [min, max]"), so each system's verdict is one boolean:

    row_count  min                  at least `min` rows
    not_null   column               no null
    accepted   column, values       every non-null value is one of `values`
    pattern    column, regex        every non-null value matches `regex` (Java syntax, anchored)
    range      column, min, max     every non-null value within [min, max] (either may be None)
    stat       column, stat, min, max   mean | min | max | stddev | sum within [min, max]
    unique     columns              no key (all parts non-null) occurs twice

The data (bench/data.py) has nulls only in `customer_name` and `country`, so the systems'
different handling of nulls in patterns and ranges cannot change a verdict.
"""

from __future__ import annotations

from typing import Any

Rule = dict[str, Any]

STATUSES = ["NEW", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"]
COUNTRIES = ["DE", "FR", "NL", "BE", "IT", "ES", "PL", "SE", "AT", "DK"]
EMAIL = r"^[a-z0-9._]+@[a-z0-9]+\.[a-z]{2,3}$"
CUSTOMER = r"^C[0-9]+$"


def _r(i: int, kind: str, **fields: Any) -> Rule:
    return {"id": f"r{i:03d}", "kind": kind, **fields}


def r10() -> list[Rule]:
    """Ten rules of the kinds users start with; five fail on the generated data."""
    return [
        _r(1, "row_count", min=1),
        _r(2, "not_null", column="order_id"),
        _r(3, "not_null", column="customer_name"),  # fails: 2% nulls
        _r(4, "accepted", column="status", values=STATUSES),  # fails: 0.5% UNKNOWN
        _r(5, "pattern", column="email", regex=EMAIL),  # fails: 1% malformed
        _r(6, "range", column="amount", min=0.0, max=None),  # fails: 0.5% negative
        _r(7, "range", column="quantity", min=1, max=50),
        _r(8, "stat", column="amount", stat="mean", min=400.0, max=600.0),
        _r(9, "stat", column="quantity", stat="max", min=None, max=50),
        _r(10, "stat", column="amount", stat="stddev", min=0.0, max=100.0),  # fails: ~290
    ]


def r30() -> list[Rule]:
    """R10 and twenty more of the same kinds on the other columns."""
    extra = [
        _r(11, "not_null", column="customer_id"),
        _r(12, "not_null", column="status"),
        _r(13, "not_null", column="email"),
        _r(14, "not_null", column="amount"),
        _r(15, "not_null", column="quantity"),
        _r(16, "not_null", column="created_at"),
        _r(17, "not_null", column="country"),  # fails: 1% nulls
        _r(18, "not_null", column="discount"),
        _r(19, "accepted", column="country", values=COUNTRIES),
        _r(20, "pattern", column="customer_id", regex=CUSTOMER),
        _r(21, "range", column="discount", min=0.0, max=0.5),
        _r(22, "range", column="amount", min=None, max=1000.0),
        _r(23, "range", column="order_id", min=0, max=None),
        _r(24, "stat", column="amount", stat="min", min=-100.0, max=None),
        _r(25, "stat", column="amount", stat="max", min=None, max=1000.0),
        _r(26, "stat", column="quantity", stat="mean", min=20.0, max=30.0),
        _r(27, "stat", column="quantity", stat="sum", min=1, max=None),
        _r(28, "stat", column="discount", stat="mean", min=0.0, max=0.1),  # fails: ~0.25
        _r(29, "stat", column="discount", stat="stddev", min=0.0, max=1.0),
        _r(30, "stat", column="quantity", stat="min", min=1, max=None),
    ]
    return [*r10(), *extra]


def ru() -> list[Rule]:
    """R10 plus a unique order id and a unique (customer_id, created_at); both fail (~0.1%)."""
    return [
        *r10(),
        _r(31, "unique", columns=["order_id"]),
        _r(32, "unique", columns=["customer_id", "created_at"]),
    ]


def fusable(n: int) -> list[Rule]:
    """`n` distinct fusable rules (no uniqueness), for the 10 / 30 / 100 scaling series: the
    kinds of R30 cycled over the columns with thresholds varied so no two rules are alike."""
    rules: list[Rule] = []
    numeric = ["amount", "quantity", "discount", "order_id"]
    stats = ["mean", "min", "max", "stddev", "sum"]
    every = [
        "order_id", "customer_id", "status", "email", "amount", "quantity", "created_at",
        "discount",
    ]  # fmt: skip
    i = 0
    while len(rules) < n:
        step = i // 8
        slot = i % 8
        i += 1
        if slot == 0:
            rules.append(_r(i, "not_null", column=every[step % len(every)]))
        elif slot == 1:
            rules.append(_r(i, "range", column=numeric[step % 4], min=-1_000_000 - step, max=None))
        elif slot == 2:
            values = [*STATUSES, "UNKNOWN", f"X{step}"]
            rules.append(_r(i, "accepted", column="status", values=values))
        elif slot == 3:
            stat = stats[step % 5]
            rules.append(
                _r(i, "stat", column=numeric[step % 3], stat=stat, min=-1e12 - step, max=1e15)
            )
        elif slot == 4:
            rules.append(_r(i, "range", column=numeric[step % 4], min=None, max=1e12 + step))
        elif slot == 5:
            rules.append(_r(i, "accepted", column="country", values=[*COUNTRIES, f"Z{step}"]))
        elif slot == 6:
            rules.append(_r(i, "row_count", min=1 + step))
        else:
            regex = f"^C[0-9]{{1,{12 + step}}}$"  # distinct patterns, each a regex to run
            rules.append(_r(i, "pattern", column="customer_id", regex=regex))
    return rules


def s1() -> list[Rule]:
    """One rule failing on 1 % of rows (malformed emails): what failing-row samples cost
    (bench/sample_cost.py)."""
    return [_r(1, "pattern", column="email", regex=EMAIL)]


RULESETS = {
    "S1": s1,
    "R10": r10,
    "R30": r30,
    "RU": ru,
    "F10": lambda: fusable(10),
    "F30": lambda: fusable(30),
    "F100": lambda: fusable(100),
}


def ruleset(name: str) -> list[Rule]:
    return RULESETS[name]()


def columns_of(rules: list[Rule]) -> list[str]:
    """The columns a rule set reads, in first-use order (for the floors' projections)."""
    seen: list[str] = []
    for rule in rules:
        for c in rule.get("columns") or ([rule["column"]] if "column" in rule else []):
            if c not in seen:
                seen.append(c)
    return seen
