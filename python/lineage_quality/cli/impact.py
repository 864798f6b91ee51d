"""`lineage-quality impact --dataset NAME [--run ID]`: the runs and datasets downstream of a
failing write, transitively, with the affected columns (docs/lineage.md, "impact").

The write is the dataset's latest failing one (a failed rule or a mark), or the write of run ID.
NAME resolves as `gate --dataset` resolves it. The history store is only read. `--output table`
(default), `json`, or `html` (one self-contained page with the graph drawn in SVG). Exit 0 with
the impact (an empty one when no failing write is kept), 2 when the dataset is unknown, the name
is ambiguous, the run wrote no such write, or the store cannot be read: one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

OUTPUTS = ("table", "json", "html")


def add_parser(sub: Any) -> None:
    """The `impact` command."""
    impact = sub.add_parser(
        "impact", help="the datasets and columns downstream of a failing write (from the history)"
    )
    impact.add_argument(
        "--dataset",
        required=True,
        metavar="NAME|PATH",
        help="namespace:name as in the facets, a path, a URL or a catalog table (as gate's)",
    )
    impact.add_argument("--run", metavar="ID", help="the write of this run (default: the latest "
                        "failing write of the dataset)")  # fmt: skip
    impact.add_argument("--output", choices=OUTPUTS, default="table", help="the format")
    impact.add_argument(
        "--history",
        default=".lineage-quality/history.db",
        metavar="PATH|URL",
        help="serve's --history: a SQLite file or a postgresql:// URL",
    )
    impact.add_argument("--history-password-file", metavar="FILE", help="as serve's")
    impact.set_defaults(func=run)


def _fail(line: str) -> int:
    from lineage_quality.inert import inert

    print(inert(f"lineage-quality impact: {line}"), file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from lineage_quality.errors import ConfigError
    from lineage_quality.history.postgres import postgres_url
    from lineage_quality.lineage.store import open_lineage

    where = str(args.history)
    if not postgres_url(where) and not Path(where).exists():
        return _fail(f"no history store at {where} (pass serve's --history)")
    try:
        store = open_lineage(where, read_only=True, password_file=args.history_password_file)
    except ConfigError as exc:
        return _fail(f"cannot read the history store: {exc}")
    try:
        if not store.present and not postgres_url(where):
            _probe(Path(where))  # no lineage tables: a store from before them, or not a store
        return _impact(args, store)
    except Exception as exc:  # the DB-API module's own errors: the store cannot be read
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        return _fail(f"cannot read the history store: {first}")
    finally:
        store.close()


def _probe(path: Path) -> None:
    """Raise sqlite3's error when `path` is not a SQLite database at all."""
    import sqlite3

    connection = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    finally:
        connection.close()


def _impact(args: argparse.Namespace, store: Any) -> int:
    import json

    from lineage_quality.inert import inert
    from lineage_quality.lineage.impact import failing_write, walk
    from lineage_quality.lineage.impact_html import impact_html
    from lineage_quality.lineage.impact_view import impact_doc, impact_table

    name = args.dataset
    found = store.find(name)
    if not found:
        return _fail(f"{name}: unknown dataset (no write of it is kept)")
    if len(found) > 1:
        return _fail(f"{name}: names {len(found)} datasets ({', '.join(found)}); "
                     "give namespace:name")  # fmt: skip
    dataset = found[0]
    if args.run is not None:
        start = store.write_of(dataset, args.run)
        if start is None:
            return _fail(f"{dataset}: no write of it by run {args.run} is kept")
    else:
        start = failing_write(store.writes(dataset))
        if start is None:
            print(inert(f"{dataset}: no failing write of it is kept; nothing to show"))
            return 0
    impact = walk(start, store)
    if args.output == "json":
        print(json.dumps(impact_doc(impact), ensure_ascii=True))
    elif args.output == "html":
        sys.stdout.write(impact_html(impact))
    else:
        # names from events: no escape reaches the terminal (each line made inert alone)
        print("\n".join(inert(line) for line in impact_table(impact).split("\n")))
    return 0
