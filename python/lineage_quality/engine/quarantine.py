"""QUARANTINE: write the failing rows of failed row-level rules aside, as Parquet.

An extra pass over the data, only for rules whose action is QUARANTINE and whose verdict is
FAILED. Rows are selected with the engine's own per-row predicate (`failing_rows.py`), so the
rows written are the rows the verdict counted. At most `max_rows` rows per rule; each row gets
the rule id in the `lq_rule_id` column. Layout:

    <location>/run_id=<runId>/dataset=<namespace:name, %-escaped>/rule_id=<rule id, %-escaped>/

Writing is idempotent per (run, dataset, rule): a re-evaluation overwrites the same folder. The
location is kept within `config.bounds` (size and retention, see `quarantine_bounds`): after each
write the oldest run folders expire; rows that alone would pass the size bound are not kept, and
their results say so.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from urllib.parse import quote

import attrs
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_quality.bounds import QUARANTINE_MAX_ROWS, QuarantineBounds
from lineage_quality.engine import quarantine_bounds
from lineage_quality.engine.failing_rows import failing_rows
from lineage_quality.results import Quarantined, RuleResult, Status
from lineage_quality.rules import Action

log = logging.getLogger(__name__)

RULE_ID_COLUMN = "lq_rule_id"


@attrs.frozen
class QuarantineConfig:
    location: str  # a folder path or URI Spark can write to
    max_rows: int = QUARANTINE_MAX_ROWS  # the one default (bounds.py), Settings' too
    bounds: QuarantineBounds = attrs.field(factory=QuarantineBounds)

    def __attrs_post_init__(self) -> None:
        if self.max_rows < 1:
            raise ValueError(f"quarantine max rows must be at least 1, not {self.max_rows}")


def _escape(value: str) -> str:
    # One path segment whatever the value holds ('/', ':', '=' ...).
    return quote(value, safe="")


def quarantine_path(config: QuarantineConfig, run_id: str, dataset: str, rule_id: str) -> str:
    return (
        f"{config.location.rstrip('/')}/run_id={run_id}/dataset={_escape(dataset)}"
        f"/rule_id={_escape(rule_id)}"
    )


def _wants_quarantine(result: RuleResult) -> bool:
    # a rule with a filter condition counted only the rows it selects: its failing rows are not
    # those of the whole dataset, and are not written aside (docs/quarantine.md)
    return (
        result.status is Status.FAILED
        and result.rule.effective_action is Action.QUARANTINE
        and not result.rule.filter_condition
    )


def quarantine_failures(
    df: DataFrame,
    results: Sequence[RuleResult],
    config: QuarantineConfig,
    run_id: str | None,
    dataset: str,
) -> list[RuleResult]:
    """`results` with `quarantine` set on each failed QUARANTINE rule whose failing rows could be
    selected (row-level kinds); other results come back unchanged."""
    wanted = [r for r in results if _wants_quarantine(r)]
    if not wanted:
        return list(results)
    try:
        run = str(uuid.UUID(run_id or ""))  # a run id chooses a folder: only a UUID may
    except ValueError:
        log.warning("%s: run id %r is not a UUID; failing rows not quarantined", dataset, run_id)
        return list(results)
    written: dict[str, Quarantined] = {}
    # per-row kinds only (not rowCount, duplicates, statistics, sql): their failing rows
    for found in failing_rows(df, [r.rule for r in wanted], time.time()):
        assert found.where is not None  # not grouped
        path = quarantine_path(config, run, dataset, found.rule.id)
        written[found.rule.id] = _write(df, found.where, found.rule.id, path, config.max_rows)
    if written:
        written = _within_bounds(df, config, run, written)
    return [
        attrs.evolve(r, quarantine=written[r.rule.id]) if r.rule.id in written else r
        for r in results
    ]


def _write(df: DataFrame, condition: Column, rule_id: str, path: str, limit: int) -> Quarantined:
    try:
        rows = df.where(condition).limit(limit).withColumn(RULE_ID_COLUMN, F.lit(rule_id))
        rows.write.mode("overwrite").parquet(path)
        count = df.sparkSession.read.parquet(path).count()  # what landed, from the files
    except Exception as exc:
        log.warning("quarantine of rule %s to %s failed: %s", rule_id, path, exc)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        return Quarantined(path=path, error=f"writing failing rows failed: {first}")
    log.info("quarantined %d row(s) of rule %s to %s", count, rule_id, path)
    return Quarantined(path=path, rows=count)


def _within_bounds(
    df: DataFrame, config: QuarantineConfig, run: str, written: dict[str, Quarantined]
) -> dict[str, Quarantined]:
    """Expire what the location's bounds say, and take back the rows just written when this run
    alone is over its size bound (their results then say why)."""
    max_bytes = config.bounds.max_bytes
    try:
        folders = quarantine_bounds.folders_at(df.sparkSession, config.location)
        if folders is None:
            log.warning(
                "quarantine at %s: cannot list it from here; bounds not applied", config.location
            )
            return written
        with quarantine_bounds.LOCK:
            if quarantine_bounds.enforce_bounds(folders, config.bounds, run, time.time()):
                return written
            for done in written.values():
                folders.delete(done.path)
    except Exception as exc:  # py4j or OS errors: the rows stay, the next write tries again
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        log.warning("quarantine at %s: could not apply its bounds: %s", config.location, first)
        return written
    log.warning(
        "quarantine: run %s alone is over %d bytes; its new rows are not kept", run, max_bytes
    )
    error = f"failing rows not kept: the run's quarantine would pass its bound of {max_bytes} bytes"
    return {rule_id: Quarantined(path=q.path, error=error) for rule_id, q in written.items()}
