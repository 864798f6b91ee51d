"""Why an event's dataset binds to a contract's rules, or why it does not. Pure.

Used by `lineage-quality bindings` (recorded events against a set of contracts) and by `serve`,
which logs once per dataset an event dataset that no contract binds but one nearly does: the
same path under another scheme or bucket, a name pattern that misses by a prefix, the same
table name in another database.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

import attrs

from lineage_quality.contracts.binding import (
    BoundRules,
    DatasetPattern,
    canonical_namespace,
    normalize_name,
    table_key,
)


@attrs.frozen
class Match:
    """A schema object whose rules bind to the dataset, and by what."""

    binding: BoundRules
    by: str  # "path s3://lake + orders/*" or "table default.orders"


@attrs.frozen
class NearMiss:
    binding: BoundRules
    why: str


@attrs.frozen
class Explanation:
    namespace: str
    name: str
    tables: tuple[str, ...]
    matches: tuple[Match, ...]
    near: tuple[NearMiss, ...]

    @property
    def bound(self) -> bool:
        return bool(self.matches)


def explain(
    bindings: Sequence[BoundRules], namespace: str, name: str, tables: Sequence[str] = ()
) -> Explanation:
    matches: list[Match] = []
    near: list[NearMiss] = []
    wanted_tables = {table_key(t): t for t in tables}
    for binding in bindings:
        found = [p for p in binding.patterns if p.matches(namespace, name)]
        if found:
            matches.append(Match(binding, f"path {_show(found[0])}"))
            continue
        by_table = [t for t in binding.tables if table_key(t) in wanted_tables]
        if by_table:
            matches.append(Match(binding, f"table {by_table[0]}"))
            continue
        why = _near_path(binding.patterns, namespace, name) or _near_table(
            binding.tables, list(wanted_tables.values())
        )
        if why:
            near.append(NearMiss(binding, why))
    if matches:
        near = []  # bound: a near miss elsewhere is someone else's dataset
    return Explanation(namespace, name, tuple(tables), tuple(matches), tuple(near))


def _show(pattern: DatasetPattern) -> str:
    return f"{pattern.namespace} + {pattern.name}"


def _near_path(patterns: Sequence[DatasetPattern], namespace: str, name: str) -> str | None:
    normalized = normalize_name(namespace, name)
    if normalized is None:
        return None
    for pattern in patterns:
        same_space = DatasetPattern(pattern.namespace, "*").matches(namespace, "/x")
        name_fits = DatasetPattern(namespace, pattern.name).matches(namespace, name)
        if name_fits and not same_space:
            return (
                f"its name fits {_show(pattern)}, but its namespace {namespace} is not "
                f"{pattern.namespace}" + _scheme_hint(pattern.namespace, namespace)
            )
        if not same_space:
            if _tail(pattern.name) and _tail(pattern.name) == _tail(normalized):
                return (
                    f"the same dataset name ({_tail(normalized)}) as {_show(pattern)}, in "
                    f"namespace {namespace}"
                )
            continue
        widened = ("*" if pattern.name.startswith(("/", "*")) else "*/") + pattern.name
        if DatasetPattern(pattern.namespace, widened).matches(namespace, name):
            return (
                f"{_show(pattern)} misses only by a prefix: the event names {normalized!r} "
                f"({widened!r} would bind it)"
            )
        if _tail(pattern.name) and _tail(pattern.name) == _tail(normalized):
            return f"{_show(pattern)} names the same folder name in another path ({normalized})"
    return None


def _near_table(contract_tables: Sequence[str], event_tables: Sequence[str]) -> str | None:
    for wanted in contract_tables:
        last = table_key(wanted).rsplit(".", 1)[-1]
        for table in event_tables:
            if table_key(table).rsplit(".", 1)[-1] == last:
                return f"it is table {table}; the contract binds table {wanted}"
    return None


def _tail(name: str) -> str:
    return posixpath.basename(name.rstrip("/")) if not any(c in name for c in "*?[") else ""


def _scheme_hint(wanted: str, got: str) -> str:
    if canonical_namespace(wanted).split("://")[0] != canonical_namespace(got).split("://")[0]:
        return " (another scheme)"
    return " (another bucket, host or folder)"
