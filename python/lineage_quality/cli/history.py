"""`lineage-quality history`: a dataset's kept measurements as a table, and a chart of one rule.

    lineage-quality history --history .lineage-quality/history.db --dataset file:/lake/orders
    lineage-quality history --history ... --dataset file:/lake/orders --rule orders.rows \\
        --since 2026-11-01 --plot orders.html

Without `--rule`, the rules kept for the dataset; with it, the rule's points (time, run, value,
status, band, and a note for runs accepted as normal or before a rebaseline) and what users said
about them (`history accept`, `history rebaseline`: cli/history_feedback.py). `--plot` writes the
chart (`.svg`, or `.html` holding it). Text from events
(dataset names, run ids) is made inert for the terminal. The store is opened read-only: the
viewer never changes it, nor any other file it is pointed at (docs/history.md).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from lineage_quality.cli.history_feedback import add_parsers, since_ms
from lineage_quality.errors import ConfigError
from lineage_quality.history.chart import page, svg
from lineage_quality.history.feedback import FeedbackState
from lineage_quality.history.postgres import postgres_url
from lineage_quality.history.store import HistoryBounds, SqlHistory, open_history
from lineage_quality.history.times import iso_ms
from lineage_quality.inert import inert
from lineage_quality.results import NON_FINITE
from lineage_quality.rules.history import HistoryMinimums


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("history", help="a dataset's measurements over time, and a chart")
    parser.add_argument(
        "--history",
        default=".lineage-quality/history.db",
        metavar="PATH|URL",
        help="serve's --history: a SQLite file or a postgresql:// URL",
    )
    parser.add_argument("--history-password-file", metavar="FILE", help=PASSWORD_FILE_HELP)
    parser.add_argument("--dataset", help="NAMESPACE:NAME as in the facets (omit: list datasets)")
    parser.add_argument("--rule", metavar="ID", help="one rule's points (its rule id)")
    parser.add_argument("--since", metavar="DATE", help="ISO date or time (UTC unless given)")
    parser.add_argument("--plot", metavar="FILE", help="write the rule's chart: .svg or .html")
    parser.set_defaults(func=run)
    add_parsers(parser, PASSWORD_FILE_HELP)


PASSWORD_FILE_HELP = (
    "the PostgreSQL password, on the first line of FILE, for a --history URL without one (or "
    "libpq's PGPASSFILE / ~/.pgpass, PGPASSWORD): a password in the URL shows in `ps`"
)


def add_history_flags(serve: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """serve's history store options; the group also takes the settings of history rules."""
    group = serve.add_argument_group("history", "docs/history.md")
    group.add_argument(
        "--history",
        metavar="PATH|URL",
        help="where every evaluation's measured values are kept: a SQLite file (default: "
        "history.db beside --spool) or a postgresql:// URL shared by several producers; "
        "'off' keeps none (history rules are then ERRORs saying so)",
    )
    group.add_argument("--history-password-file", metavar="FILE", help=PASSWORD_FILE_HELP)
    group.add_argument(
        "--history-max-points",
        type=int,
        default=HistoryBounds().max_points,
        metavar="N",
        help="rows kept at most; past it the oldest expire",
    )
    group.add_argument(
        "--history-retention-days",
        type=float,
        default=HistoryBounds().retention_days,
        metavar="DAYS",
        help="rows whose event time is older than this (by the clock: now) expire",
    )
    group.add_argument(
        "--history-max-bytes",
        type=int,
        default=HistoryBounds().max_bytes,
        metavar="BYTES",
        help="bytes kept at most (a row: its texts' UTF-8 bytes plus 64; default %(default)s, "
        "256 MiB); past it the oldest rows expire",
    )
    return group


def add_minimum_flags(parser: argparse.ArgumentParser) -> None:
    """serve's `--history-min-stddev` and `--history-min-seasonal` for another command (check):
    their help and default are the settings' (producer/settings.py)."""
    from lineage_quality.producer.settings import DEFAULTS, flags

    fields = dict(flags())
    for name in ("history_min_stddev", "history_min_seasonal"):
        meta = fields[name].metadata
        parser.add_argument(
            meta["flag"],
            dest=name,
            type=int,
            default=DEFAULTS.get(name),
            metavar=meta["metavar"],
            help=meta["help"],
        )


def minimums_of(args: argparse.Namespace) -> HistoryMinimums:
    try:
        return HistoryMinimums(args.history_min_stddev, args.history_min_seasonal)
    except ValueError as exc:
        raise ConfigError(f"--history-min-stddev / --history-min-seasonal: {exc}") from None


def history_where(args: argparse.Namespace) -> str | None:
    """serve's history store: --history, else history.db beside the spool; None for off."""
    where = str(args.history or Path(args.spool).parent / "history.db")
    return None if where == "off" else where


def history_store(args: argparse.Namespace) -> SqlHistory | None:
    """The store serve's flags name: --history, else history.db beside the spool; None for off."""
    where = history_where(args)
    if where is None:
        return None
    try:
        bounds = HistoryBounds(
            args.history_max_points, args.history_retention_days, args.history_max_bytes
        )
    except ValueError:
        raise ConfigError(
            "--history-max-points, --history-retention-days and --history-max-bytes must be "
            "positive"
        ) from None
    return open_history(where, bounds, password_file=args.history_password_file)


def _since_ms(text: str | None) -> int | None:
    return None if text is None else since_ms(text)


def run(args: argparse.Namespace) -> int:
    if (
        not postgres_url(str(args.history))  # a mistyped URL: refused, masked
        and not Path(args.history).exists()
    ):
        raise ConfigError(f"no history at {args.history} (pass serve's --history)")
    if args.plot and not args.rule:
        raise ConfigError("--plot needs --rule: a chart shows one rule's series")
    if args.plot and Path(args.plot).suffix.lower() not in (".svg", ".html", ".htm"):
        raise ConfigError(f"--plot {args.plot}: write a .svg or .html file")
    store = open_history(args.history, read_only=True, password_file=args.history_password_file)
    try:
        if not args.dataset:
            for name, count in store.datasets():
                print(f"{inert(name)}\t{count} point(s)")
            return 0
        if not args.rule:
            rules = store.rules(args.dataset)
            if not rules:
                raise ConfigError(f"nothing kept for dataset {args.dataset!r}")
            print("rule\tmetric\tpoints")
            for rule_id, metric, count in rules:
                print(f"{inert(rule_id)}\t{inert(metric)}\t{count}")
            return 0
        points = store.series(args.dataset, args.rule, since_ms=_since_ms(args.since))
        if not points:
            raise ConfigError(f"no points of rule {args.rule!r} on {args.dataset!r}")
        records = store.feedback(args.dataset, args.rule)
        state = FeedbackState.of(records)
        print("time\trun\tvalue\tstatus\tband\tnote")
        for p in points:
            band = "" if p.lower is None and p.upper is None else f"{_g(p.lower)}..{_g(p.upper)}"
            value = _g(p.value)
            if p.shown is not None:  # a masked column's value: its masked text, no band
                band, value = "", inert(p.shown)
            note = _note(p.run_id, p.event_ms, state)
            # fields from events made inert one by one: the tabs between them stay tabs
            print(
                f"{iso_ms(p.event_ms)}\t{inert(p.run_id)}\t{value}\t{inert(p.status)}\t"
                f"{band}\t{inert(note)}"
            )
        if records:
            print("feedback:")
            for record in records:
                print(f"  {inert(record.describe())}")
        if args.plot:
            title = f"{args.rule} on {args.dataset}"
            text = (
                svg(title, points, records)
                if args.plot.lower().endswith(".svg")
                else page(title, points, records)
            )
            Path(args.plot).write_text(text, encoding="utf-8")
            failed = sum(p.status == "FAILED" for p in points)
            print(f"wrote {args.plot}: {len(points)} point(s), {failed} failed")
        return 0
    finally:
        store.close()


def _note(run_id: str, event_ms: int, state: FeedbackState) -> str:
    if state.since_ms is not None and event_ms < state.since_ms:
        return "before the rebaseline"
    by = dict(state.accepted_by)
    return f"accepted as normal by {by[run_id]}" if run_id in by else ""


def _g(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.6g}" if math.isfinite(value) else NON_FINITE[repr(value)]
