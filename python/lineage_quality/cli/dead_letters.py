"""`lineage-quality dead-letters`: what a sink kept refusing for good -- events (the spool's
`dead_letters`) or, with `--alerts`, alerts (the alert outbox beside the spool) -- listed, shown
whole, delivered again or purged; with the events, the records of Kafka messages that were not
events (the spool's bad messages: listed, shown, purged, never sent). Safe while `serve` runs
(SQLite WAL).

Run ids, job and dataset names and the sinks' answers come from outside: `list` prints them inert
(control characters escaped, so no escape sequence reaches the terminal), `show` as JSON (which
escapes them). Alert webhooks are shown by scheme and host only (Slack's URLs are secrets).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_quality.errors import ConfigError
from lineage_quality.inert import inert

if TYPE_CHECKING:
    from lineage_quality.producer.spool import DeadLetter


def _when(epoch: float) -> str:
    return f"{datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}"


def _chosen_ids(wanted: list[int], present: list[int], where: str) -> list[int]:
    missing = sorted(set(wanted) - set(present))
    if missing:
        raise ConfigError(f"no dead letter {', '.join(map(str, missing))} in {where}")
    return [i for i in present if not wanted or i in wanted]


def dead_letters(args: argparse.Namespace) -> int:
    if args.action == "retry" and not args.ids:
        raise ConfigError("retry needs the ids of the dead letters to send again")
    return _alerts(args) if args.alerts else _events(args)


def _events(args: argparse.Namespace) -> int:
    """The spool's dead letters (events a sink refused) and its bad messages (records of Kafka
    messages that were not events), in one id space."""
    from lineage_quality.producer import Spool

    if not Path(args.spool).exists():
        raise ConfigError(f"no spool at {args.spool} (pass serve's --spool)")
    spool = Spool(args.spool)
    try:
        letters = {d.id: d for d in spool.dead_letters()}
        bad = {b.id: b for b in spool.bad_messages()}
        chosen = _chosen_ids(args.ids, sorted([*letters, *bad]), args.spool)
        if args.action == "list":
            for i in chosen:
                if i in letters:
                    d = letters[i]
                    print(f"{d.id}\t{_when(d.dead)}\t{inert(d.lane)}\t{d.attempts}\t"
                          f"{inert(d.reason)}")  # fmt: skip
                else:
                    b = bad[i]
                    what = f"{inert(b.reason)} ({b.size} bytes, sha256 {b.sha256[:16]})"
                    print(f"{b.id}\t{_when(b.received)}\t{inert(b.where)}\t-\t{what}")
            print(f"{len(chosen)} dead letter(s)", file=sys.stderr)
        elif args.action == "show":
            for i in chosen:
                shown = _letter(letters[i]) if i in letters else bad[i].shown()
                print(json.dumps(shown, indent=2))
        elif args.action == "retry":
            refused = [i for i in chosen if i in bad]
            if refused:
                raise ConfigError(
                    f"dead letter(s) {', '.join(map(str, refused))}: Kafka message(s) that were "
                    "not events, kept as records (their first bytes), not whole: nothing to send "
                    "again (`show` says where each is in its topic)"
                )
            for i in chosen:
                print(f"dead letter {i} queued again as event {spool.retry_dead_letter(i)}")
        else:
            wanted = list(args.ids) if args.ids else None
            purged = spool.purge_dead_letters(wanted) + spool.purge_bad_messages(wanted)
            print(f"purged {purged} dead letter(s)")
    finally:
        spool.close()
    return 0


def _letter(d: DeadLetter) -> dict[str, Any]:
    """A dead letter as `show` prints it: its event parsed (a Kafka message an older version
    kept among the dead letters may be no JSON: then its text)."""
    try:
        body: dict[str, Any] = {"event": json.loads(d.body)}
    except ValueError:
        body = {"body": d.body}
    return {"id": d.id, "lane": d.lane, "reason": d.reason, **body}


def _alerts(args: argparse.Namespace) -> int:
    from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path

    path = outbox_path(args.spool)
    if not path.exists():
        raise ConfigError(f"no alert outbox at {path} (serve had no alert webhook)")
    outbox = AlertOutbox(path)
    try:
        letters = {d.rowid: d for d in outbox.dead_letters()}
        chosen = [letters[i] for i in _chosen_ids(args.ids, list(letters), str(path))]
        if args.action == "list":
            for d in chosen:
                fields = (d.rowid, _when(d.dead), _sink_label(d.sink), inert(d.run_id),
                          inert(d.dataset), d.attempts, inert(d.reason))  # fmt: skip
                print("\t".join(map(str, fields)))
            print(f"{len(chosen)} dead alert(s)", file=sys.stderr)
        elif args.action == "show":
            for d in chosen:
                print(json.dumps({"id": d.rowid, "sink": _sink_label(d.sink), "runId": d.run_id,
                                  "dataset": d.dataset, "reason": d.reason,
                                  "alert": json.loads(d.body)}, indent=2))  # fmt: skip
        elif args.action == "retry":
            for d in chosen:
                outbox.retry_dead_letter(d.rowid)
                print(f"dead alert {d.rowid} queued again (sent by serve within a second)")
        else:
            purged = outbox.purge_dead_letters(list(args.ids) if args.ids else None)
            print(f"purged {purged} dead alert(s)")
    finally:
        outbox.close()
    return 0


def _sink_label(name: str) -> str:
    """The outbox names a sink `kind url`: shown as `Webhook.label` (no secret path)."""
    from lineage_quality.producer.alert_sender import Webhook

    kind, _, url = name.partition(" ")
    return inert(Webhook(url, kind).label)


def add_parser(sub: Any) -> None:
    """The `dead-letters` command."""
    dead = sub.add_parser(
        "dead-letters",
        help="events a sink (--alerts: alerts a webhook) kept refusing: list, show, retry, purge",
    )
    dead.add_argument("action", choices=["list", "show", "retry", "purge"])
    dead.add_argument("ids", nargs="*", type=int, metavar="ID", help="dead letter ids")
    dead.add_argument("--spool", default=_default_spool(), help="serve's --spool")
    dead.add_argument("--alerts", action="store_true", help="alerts a webhook kept refusing")
    dead.set_defaults(func=dead_letters)


def _default_spool() -> str:
    from lineage_quality.producer.settings import DEFAULTS

    return str(DEFAULTS.spool.path)
