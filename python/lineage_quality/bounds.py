"""The bounds of the stores that grow with what events bring, each with its default, in one place.

Every store an event can make grow is counted against a bound, and past it the oldest entries
expire: it never grows past the bound (docs/reliability.md, "Bounds"). The spool's own bound
(`--spool-max-events`, `--spool-max-bytes`) refuses new events instead (503), since its entries are
events not yet delivered. Pure data: the stores read these; `serve` and `attach` use the defaults.
"""

from __future__ import annotations

import attrs

DAY = 24 * 3600.0

# OpenLineage run ids are UUIDs (36 characters as written; 45 with `urn:uuid:`). A longer one is
# refused by the receiver (400): a run id is a key of the run bookkeeping, and with no length bound
# one START of 1.5 MB ids made 4.5 MB of rows there (issue 27).
MAX_RUN_ID_CHARS = 64

# How far in the future an event's `eventTime` may be, by our clock: farther is refused (400). A
# mislabelled time zone is off by at most 14 hours; a year-9999 time is a broken or hostile sender
# whose time would otherwise become the store's newest (issue 44). Event times are never clamped:
# the event goes to the sink as it came, or not at all, with a clear answer to its sender.
MAX_FUTURE_SKEW_SECONDS = 24 * 3600

# A QUARANTINE rule's failing rows written at most, per rule and run (`--quarantine-max-rows`,
# Settings.quarantine_max_rows, and QuarantineConfig's default: one number).
QUARANTINE_MAX_ROWS = 1000


@attrs.frozen
class RunBookBounds:
    """What the spool keeps for `GET /api/v1/runs/{runId}` and `gate`: one row per run id (a run,
    its parent's and its root's) and the verdicts kept under each.

    `max_runs` rows (also the bound of the failed runs remembered), `max_verdict_bytes` of verdict
    bodies, each for at most `retention` seconds after the run was last recorded. Past a bound the
    least recently recorded runs expire with all their verdicts: an expired run is unknown (404,
    `gate` exits 2), never "evaluated" with some of its verdicts missing."""

    max_runs: int = attrs.field(default=100_000, validator=attrs.validators.gt(0))
    max_verdict_bytes: int = attrs.field(
        default=256 * 1024 * 1024, validator=attrs.validators.gt(0)
    )
    retention: float = attrs.field(default=7 * DAY, validator=attrs.validators.gt(0))


@attrs.frozen
class AlertBounds:
    """The alert outbox: an alert its webhook refused `dead_letter_after` times in a row for good
    (a 4xx other than 408/429) is dead-lettered (0: never, retried for ever); delivered and
    dead-lettered alerts are kept `retention` seconds (they remember that a run and dataset
    alerted once), then pruned."""

    dead_letter_after: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    retention: float = attrs.field(default=7 * DAY, validator=attrs.validators.gt(0))


@attrs.frozen
class QuarantineBounds:
    """The quarantine location: run folders whose newest file is older than `retention` seconds
    expire, and past `max_bytes` in all the oldest run folders expire until it holds. The run
    being written is never expired for another; when it alone is over `max_bytes`, the rows just
    written are removed again and their results say so."""

    max_bytes: int = attrs.field(default=1024**3, validator=attrs.validators.gt(0))
    retention: float = attrs.field(default=30 * DAY, validator=attrs.validators.gt(0))


@attrs.frozen
class LineageBounds:
    """The lineage kept in the history store (lineage/store.py): each dataset's writes (run,
    time, version, failed rules, upstream marks) and each run's edges (the datasets it read and
    wrote, with column lineage). Rows whose event time is older than `retention_days` (by the
    wall clock) expire; past `max_rows` rows or `max_bytes` bytes in a table its oldest rows go,
    1 % of the bound more at a time. The bounds are checked every `check_every` events a process
    keeps: a table passes its bound by at most that many events' rows. The check reads each
    table's rows and bytes from `lq_lineage_totals`, kept by the database's triggers (schema 2,
    lineage/schema.py), not a count of the table: its cost does not grow with the table. A
    dataset whose writes all expired is unknown again (`gate --dataset` exits 2), never
    "healthy". One write keeps at most `max_marks` marks: past it the marks of an upstream
    failure become one whole-dataset mark."""

    max_rows: int = attrs.field(default=500_000, validator=attrs.validators.gt(0))
    max_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=attrs.validators.gt(0))
    retention_days: float = attrs.field(default=400.0, validator=attrs.validators.gt(0))
    max_marks: int = attrs.field(default=500, validator=attrs.validators.gt(0))
    check_every: int = attrs.field(default=64, validator=attrs.validators.gt(0))


@attrs.frozen
class SharedRunBounds:
    """The run verdicts kept in the history store for every producer sharing it
    (producer/shared_runs.py): the verdict rows of each evaluated event under its run ids
    (`gate --run-id --history`), and its enriched text (a redelivered COMPLETE is not evaluated
    again). Rows recorded more than `retention_days` ago expire; past `max_rows` rows or
    `max_bytes` bytes in a table its oldest go; checked every `check_every` events kept. An
    expired run is unknown (`gate` exits 2), an expired event is evaluated again if redelivered."""

    max_rows: int = attrs.field(default=200_000, validator=attrs.validators.gt(0))
    max_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=attrs.validators.gt(0))
    # as the runs API's own bookkeeping (RunBookBounds); a redelivery comes within minutes
    retention_days: float = attrs.field(default=7.0, validator=attrs.validators.gt(0))
    check_every: int = attrs.field(default=64, validator=attrs.validators.gt(0))
