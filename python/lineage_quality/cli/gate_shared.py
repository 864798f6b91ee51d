"""`gate --run-id`'s decision from a run's verdict rows (`decide_rows`), and `gate --run-id ID
--history PATH|URL`: a run's verdicts read from the history store the producers share
(producer/shared_runs.py) instead of asked of one producer over HTTP, so that any of several
`serve` processes (one Kafka consumer group) may have evaluated it.

The store knows a run once a producer kept verdicts of it: until then (not evaluated yet, or
nothing bound to its datasets) it is unknown and `gate` exits 2 (after `--wait`), never 0."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lineage_quality.errors import ConfigError


def gate_from_store(args: argparse.Namespace) -> int:
    from lineage_quality.history.postgres import postgres_url
    from lineage_quality.inert import inert
    from lineage_quality.producer.shared_runs import open_shared_runs

    where = str(args.history)
    deadline = time.monotonic() + args.wait
    why = "unknown run (no producer kept verdicts of it)"
    try:
        if not postgres_url(where) and not Path(where).exists():
            raise ConfigError(f"no history store at {where}")
        store = open_shared_runs(
            where, read_only=True, password_file=args.history_password_file
        )
    except ConfigError as exc:
        print(inert(f"lineage-quality gate: run {args.run_id}: cannot tell: {exc}"),
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        while True:
            try:
                rows = store.verdicts(args.run_id)
            except Exception as exc:  # no tables yet, the server gone: cannot tell
                rows, why = None, f"cannot read the store: {str(exc).splitlines()[0][:200]}"
            if rows is not None:
                return decide_rows(args, rows)
            if time.monotonic() >= deadline:
                break
            time.sleep(min(2.0, max(0.1, deadline - time.monotonic())))
    finally:
        store.close()
    print(inert(f"lineage-quality gate: run {args.run_id}: {why} (after {args.wait:g}s)"),
          file=sys.stderr)  # fmt: skip
    return 2


def decide_rows(args: argparse.Namespace, rows: list[Any]) -> int:
    """The run's verdict rows (of --job only, if given) -> the exit code, the failed BLOCK
    rules printed."""
    from lineage_quality.inert import inert
    from lineage_quality.producer.run_verdicts import blocking, describe

    if args.job:
        rows = [r for r in rows if r.get("job") == args.job]
    failed = blocking(rows)
    for row in failed:  # names and messages from events: no escape sequence to the terminal
        print(f"BLOCK {inert(describe(row))}")
    print(
        inert(f"run {args.run_id}: {len(rows)} verdict(s), {len(failed)} failed BLOCK rule(s)"),
        file=sys.stderr,
    )
    return 1 if failed else 0
