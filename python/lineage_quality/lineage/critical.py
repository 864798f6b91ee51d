"""Which datasets are critical: their contract says so (ODCS `tags: [critical]` on the contract
or its schema object; `BoundRules.critical`). A BLOCK failure upstream that reaches one alerts
once (producer/lineage_alerts.py, docs/lineage.md "Alerts")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lineage_quality.contracts.binding import BoundRules, rules_for
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

# (event, one of its datasets) -> is that dataset critical
Critical = Callable[[Mapping[str, Any], DatasetRef], bool]


def never(event: Mapping[str, Any], ref: DatasetRef) -> bool:
    return False


def critical_of(bindings: Sequence[BoundRules]) -> Critical:
    """The predicate of `bindings`: a dataset bound (by location or catalog table) to a critical
    contract object."""
    chosen = [b for b in bindings if b.critical]
    if not chosen:
        return never

    def critical(event: Mapping[str, Any], ref: DatasetRef) -> bool:
        tables = list(Event.of(event).dataset(ref).tables)
        return bool(rules_for(chosen, ref.namespace, ref.name, tables))

    return critical
