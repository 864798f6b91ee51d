"""What a worker asks of an event taken from the spool before it handles it: whether it can go
out as received, unparsed (`needs_no_parse`), and its envelope (`opened`: the intake's, kept with
it in memory, else its body parsed once)."""

from __future__ import annotations

from lineage_quality.producer.envelope import EVALUATED_TYPES, Envelope, parse
from lineage_quality.producer.spool import LATE, SpooledEvent

__all__ = ["needs_no_parse", "opened"]


def needs_no_parse(item: SpooledEvent) -> bool:
    """An event this process received and validated (its type and runs known without parsing
    it again) whose type is neither evaluated nor a FAIL to remember (see `_prepare`)."""
    return (
        item.event_type is not None
        and item.kind != LATE
        and not item.enriched
        and item.event_type not in EVALUATED_TYPES
        and item.event_type != "FAIL"
    )


def opened(item: SpooledEvent) -> Envelope:
    """`item`'s envelope: the intake's, kept with it in memory, else its body parsed once."""
    if isinstance(item.event, Envelope):
        return item.event
    return Envelope.of(item.body, item.event if item.event is not None else parse(item.body))

