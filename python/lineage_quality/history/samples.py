"""Failing-row samples in the history store: `lq_samples`, one row per (dataset, rule, run) that
failed with samples, the JSON of its `Samples` (already masked: lineage_quality.samples).

Bounded like the values beside them: a sample row expires with its run's value in `lq_history`
(dropped by the retention or a bound, or its run gone), at the latest after the history's
retention; at most `MAX_SAMPLE_ROWS` rows (the oldest go) and `MAX_SAMPLE_TEXT` characters each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lineage_quality.samples import Samples

TABLE = """CREATE TABLE IF NOT EXISTS lq_samples (
    dataset TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    event_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (dataset, rule_id, run_id)
)"""
MAX_SAMPLE_ROWS = 50_000  # rows of lq_samples kept at most: the oldest go
MAX_SAMPLE_TEXT = 16_384  # characters of one rule's samples; a longer text is not kept
_UPSERT = (
    "INSERT INTO lq_samples (dataset, rule_id, run_id, event_ms, body) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (dataset, rule_id, run_id) DO UPDATE SET event_ms = excluded.event_ms, "
    "body = excluded.body"
)
# expiring with the run: a sample whose value is no longer kept goes too
_ORPHANS = (
    "DELETE FROM lq_samples WHERE event_ms < ? OR NOT EXISTS (SELECT 1 FROM lq_history h "
    "WHERE h.dataset = lq_samples.dataset AND h.rule_id = lq_samples.rule_id "
    "AND h.run_id = lq_samples.run_id)"
)
_OLDEST = (
    "DELETE FROM lq_samples WHERE (dataset, rule_id, run_id) IN (SELECT dataset, rule_id, run_id "
    "FROM lq_samples ORDER BY event_ms LIMIT ?)"
)


def keep(
    cur: Any,
    sql: Any,
    rows: Sequence[tuple[str, str, str, int, Samples]],
    oldest_ms: int | None = None,
) -> None:
    """Keep (dataset, rule id, run id, event ms, samples) rows in the transaction of `cur`
    (`sql` turns `?` into the store's placeholder; names already cut as the store keeps them),
    then apply the bounds. `oldest_ms`: the history's retention."""
    params = [
        (dataset, rule_id, run_id, event_ms, text)
        for dataset, rule_id, run_id, event_ms, samples in rows
        if len(text := samples.text()) <= MAX_SAMPLE_TEXT
    ]
    if params:
        cur.executemany(sql(_UPSERT), params)
    cur.execute(sql(_ORPHANS), (oldest_ms if oldest_ms is not None else 0,))
    cur.execute("SELECT COUNT(*) FROM lq_samples")
    count = int(cur.fetchone()[0])
    if count > MAX_SAMPLE_ROWS:
        cur.execute(sql(_OLDEST), (count - MAX_SAMPLE_ROWS + MAX_SAMPLE_ROWS // 100,))


OF_RUN = "SELECT rule_id, body FROM lq_samples WHERE dataset = ? AND run_id = ? LIMIT 1000"


def parsed(rows: Sequence[Any]) -> dict[str, Samples]:
    """Rule id -> samples, from `OF_RUN`'s rows; a body that is not ours is left out."""
    found: dict[str, Samples] = {}
    for rule_id, body in rows:
        try:
            found[str(rule_id)] = Samples.from_json(json.loads(str(body)))
        except (ValueError, TypeError, AttributeError):
            continue
    return found
