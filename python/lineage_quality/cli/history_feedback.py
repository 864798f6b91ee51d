"""`lineage-quality history accept | rebaseline`: telling a rule's history what is normal.

    lineage-quality history accept --history H --dataset D --rule R --run ID --why "new region"
    lineage-quality history accept --history H --dataset D --rule R --run ID --undo --why "..."
    lineage-quality history rebaseline --history H --dataset D --rule R --since 2026-11-20 \\
        --why "migrated to the new source"

`accept` marks a FAILED run as normal: it joins the rule's later baselines (its undo takes that
back). `rebaseline` starts the rule's baseline over: runs before `--since` are in none of its
later baselines. Each is recorded with who (`--by`, default the user running it), when and why,
and shown by `history --rule` and its chart (history/feedback.py, docs/history.md).
"""

from __future__ import annotations

import argparse
import datetime
import getpass
import time
from pathlib import Path

from lineage_quality.errors import ConfigError
from lineage_quality.history.feedback import Action, Feedback, FeedbackState
from lineage_quality.history.postgres import postgres_url
from lineage_quality.history.store import SqlHistory, open_history
from lineage_quality.history.times import iso_ms
from lineage_quality.inert import inert


def add_parsers(history: argparse.ArgumentParser, password_help: str) -> None:
    """`accept` and `rebaseline` under the `history` command."""
    sub = history.add_subparsers(dest="history_action", metavar="{accept,rebaseline}")
    accept = sub.add_parser("accept", help="mark a failed run as normal (or --undo that)")
    _common(accept, password_help)
    accept.add_argument("--run", required=True, metavar="ID", help="the run id, as `history` shows")
    accept.add_argument("--undo", action="store_true", help="take back an earlier accept")
    accept.set_defaults(func=run_accept)
    rebase = sub.add_parser("rebaseline", help="start a rule's baseline over from a time")
    _common(rebase, password_help)
    rebase.add_argument(
        "--since",
        required=True,
        metavar="TIME",
        help="ISO date or time (UTC unless given), or `now`: earlier runs join no baseline",
    )
    rebase.set_defaults(func=run_rebaseline)


def _common(parser: argparse.ArgumentParser, password_help: str) -> None:
    # SUPPRESS: given before the sub-command (`history --history H accept ...`), the value stays
    parser.add_argument(
        "--history",
        default=argparse.SUPPRESS,
        metavar="PATH|URL",
        help="serve's --history: a SQLite file or a postgresql:// URL "
        "(default .lineage-quality/history.db)",
    )
    parser.add_argument(
        "--history-password-file", default=argparse.SUPPRESS, metavar="FILE", help=password_help
    )
    parser.add_argument("--dataset", required=True, help="NAMESPACE:NAME as in the facets")
    parser.add_argument("--rule", required=True, metavar="ID", help="the rule id")
    parser.add_argument("--why", required=True, metavar="TEXT", help="recorded with it, shown")
    parser.add_argument("--by", metavar="NAME", help="who (default: the user running this)")


def _open(args: argparse.Namespace) -> SqlHistory:
    if not postgres_url(str(args.history)) and not Path(args.history).exists():
        raise ConfigError(f"no history at {args.history} (pass serve's --history)")
    if not args.why.strip():
        raise ConfigError("--why: say why (it is recorded and shown with the change)")
    return open_history(args.history, password_file=args.history_password_file)


def _who(args: argparse.Namespace) -> str:
    if args.by:
        return str(args.by)
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without one)
        return "unknown"


def run_accept(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        points = {p.run_id: p for p in store.series(args.dataset, args.rule)}
        point = points.get(args.run)
        if point is None:
            raise ConfigError(
                f"no run {args.run!r} of rule {args.rule!r} on {args.dataset!r} "
                "(`history --dataset D --rule R` lists its runs)"
            )
        state = FeedbackState.of(store.feedback(args.dataset, args.rule))
        if args.undo and args.run not in state.accepted:
            raise ConfigError(f"run {args.run!r} is not accepted: nothing to undo")
        if not args.undo and point.status != "FAILED":
            raise ConfigError(f"run {args.run!r} {point.status}: only a failed run is accepted")
        if not args.undo and args.run in state.accepted:
            raise ConfigError(f"run {args.run!r} is already accepted")
        record = Feedback(
            dataset=args.dataset,
            rule_id=args.rule,
            action=Action.UNDO if args.undo else Action.ACCEPT,
            by=_who(args),
            why=args.why,
            at_ms=int(time.time() * 1000),
            run_id=args.run,
        )
        store.record(record)
    finally:
        store.close()
    effect = (
        "later baselines leave it out again" if args.undo else "it joins the rule's later baselines"
    )
    print(f"{inert(record.describe())}\n{effect}")
    return 0


def run_rebaseline(args: argparse.Namespace) -> int:
    since = since_ms(args.since)
    store = _open(args)
    try:
        points = store.series(args.dataset, args.rule)
        if not points:
            raise ConfigError(f"no points of rule {args.rule!r} on {args.dataset!r}")
        record = Feedback(
            dataset=args.dataset,
            rule_id=args.rule,
            action=Action.REBASELINE,
            by=_who(args),
            why=args.why,
            at_ms=int(time.time() * 1000),
            since_ms=since,
        )
        store.record(record)
    finally:
        store.close()
    before = sum(p.event_ms < since for p in points)
    print(
        f"{inert(record.describe())}\n{before} earlier run(s) of {len(points)} are in no later "
        f"baseline of this rule (from {iso_ms(since)})"
    )
    return 0


def since_ms(text: str) -> int:
    if text == "now":
        return int(time.time() * 1000)
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--since {text!r}: not an ISO date or time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return int(when.timestamp() * 1000)
