"""One measured value of a rule on a dataset, from one run: what the store keeps and reads back,
what baselines are chosen from and what the chart draws."""

from __future__ import annotations

import attrs


@attrs.frozen
class Point:
    """One measured value of a rule on a dataset, from one run."""

    run_id: str
    event_ms: int
    value: float
    status: str  # PASSED / FAILED, or SKIPPED (a history rule with too little history yet)
    lower: float | None = None  # the band the verdict used, in the value's terms, if any
    upper: float | None = None
    # a masked column's value as people see it (masked_values.py): readers show this, never
    # `value` or the band (which stay raw for the baselines)
    shown: str | None = None
