"""An event time of the history as text, whatever a store holds.

The receiver refuses event times far in the future and the store keeps none of them, but a store
written by an older version, or a shared PostgreSQL store another producer writes, may still hold
a time `datetime` cannot show (year 10000 and later): the viewer and the chart show such a time
as what it is, they never crash on it.
"""

from __future__ import annotations

import datetime


def iso_ms(ms: int, timespec: str = "seconds") -> str:
    """`ms` (since 1970, UTC) as ISO 8601 ending in `Z`, or a text saying it is out of range."""
    try:
        when = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"out-of-range time ({ms} ms after 1970)"
    return when.isoformat(timespec=timespec).replace("+00:00", "Z")
