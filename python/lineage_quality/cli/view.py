"""`lineage-quality view --history PATH|URL`: the quality view (docs/view.md) over a history
store without `serve`: for users of `check --history` and of in-driver mode. Read-only: the same
pages and JSON API `serve` has at the root of its port, nothing else (no event is taken).

The API key (LINEAGE_QUALITY_API_KEY, or --api-key-file) guards every page and API when set;
listening off loopback without one is refused unless --allow-no-auth, as `serve` does."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from pathlib import Path
from typing import Any

DEFAULT_PORT = 5056


def add_parser(sub: Any) -> None:
    view = sub.add_parser("view", help="the quality view (pages and JSON API) over a history store")
    view.add_argument("--history", required=True, metavar="PATH|URL",
                      help="the history store: a SQLite file or a postgresql:// URL")  # fmt: skip
    view.add_argument("--history-password-file", metavar="FILE", help="as serve's")
    view.add_argument("--host", default="127.0.0.1", help="bind address (default %(default)s)")
    view.add_argument("--port", type=int, default=DEFAULT_PORT,
                      help="port (default %(default)s; 0: any free port)")  # fmt: skip
    view.add_argument("--api-key-file", help="file with the API key (else LINEAGE_QUALITY_API_KEY)")
    view.add_argument("--allow-no-auth", action="store_true",
                      help="listen off loopback without an API key")  # fmt: skip
    view.add_argument("--marquez-web-url", metavar="URL", help="link datasets to this Marquez UI")
    view.add_argument("--datahub-web-url", metavar="URL", help="link datasets to this DataHub UI")
    view.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lineage_quality.cli.serve import _require_key_off_loopback
    from lineage_quality.producer.receiver import Receiver
    from lineage_quality.producer.settings import Settings
    from lineage_quality.view.data import Links
    from lineage_quality.view.open import open_stores
    from lineage_quality.view.routes import view_routes

    key = os.environ.get("LINEAGE_QUALITY_API_KEY") or None
    if args.api_key_file:
        key = Path(args.api_key_file).read_text().strip() or None
    _require_key_off_loopback(args.host, key, args.allow_no_auth)
    links = Links(args.marquez_web_url, args.datahub_web_url)
    stores = open_stores(args.history, links, args.history_password_file)
    receiver = Receiver(None, Settings.of(host=args.host, port=args.port, api_key=key))
    receiver.add(view_routes(stores))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    receiver.start()
    print(f"lineage-quality view on {receiver.url}/ (history {args.history})", flush=True)
    stop.wait()
    receiver.stop()
    stores.lineage.close()
    if stores.history is not None:
        stores.history.close()
    return 0
