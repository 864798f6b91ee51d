"""`lineage-quality gate`: an orchestrator's step before the next job: exit 1 when a BLOCK rule
of a run failed, 2 when the producer cannot tell (docs/operations.md).

`gate --dataset NAME|PATH` asks the history store instead (serve's `--history`: a SQLite file or
the shared PostgreSQL) about a dataset's latest write: 0 evaluated and nothing blocks it, 1 a
BLOCK rule failed there or it was marked blocking from upstream, 2 never evaluated, not
evaluated yet, or the store cannot tell (docs/lineage.md). One line; `--output json` the same as
a JSON object."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_HISTORY = ".lineage-quality/history.db"  # serve's, with its default --spool
DEFAULT_URL = "http://127.0.0.1:5055"


def add_parser(sub: Any) -> None:
    """The `gate` command."""
    gate = sub.add_parser(
        "gate", help="exit 1 when a BLOCK rule of a run failed (for an orchestrator's next step)"
    )
    which = gate.add_mutually_exclusive_group(required=True)
    which.add_argument("--run-id", help="the run's id, or its parent's")
    which.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help="a dataset's latest write, from the history store: namespace:name as in the "
        "facets, a path (/lake/raw), or a URL (s3://bucket/raw)",
    )
    gate.add_argument("--job", metavar="NAMESPACE/NAME", help="only this job's verdicts")
    gate.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                      help="wait this long for the run's evaluation")  # fmt: skip
    gate.add_argument(
        "--url",
        help=f"the producer (serve, or view; default {DEFAULT_URL} for --run-id): with --dataset, "
        "ask its API (/api/v1/datasets/NAME/gate) instead of reading --history",
    )
    gate.add_argument("--api-key-file", help="file with the API key (else LINEAGE_QUALITY_API_KEY)")
    gate.add_argument(
        "--history",
        metavar="PATH|URL",
        help="serve's --history, a SQLite file or a postgresql:// URL: --dataset reads it "
        f"(default {DEFAULT_HISTORY}); --run-id reads the run's verdicts there instead of "
        "asking --url (any producer sharing it)",
    )
    gate.add_argument(
        "--history-password-file", metavar="FILE", help="with --history: as serve's"
    )
    gate.add_argument(
        "--output", choices=("text", "json"), default="text", help="with --dataset: the format"
    )
    gate.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when no BLOCK rule of the run failed, 1 when one did (listing them), 2 when it
    cannot tell (unknown run, still pending after --wait, no answer)."""
    if args.dataset is not None:
        return _dataset(args)
    if args.history is not None:
        from lineage_quality.cli.gate_shared import gate_from_store

        return gate_from_store(args)
    import json
    import time
    import urllib.error
    import urllib.parse
    import urllib.request

    from lineage_quality.inert import inert

    key = _key(args)
    run_id = urllib.parse.quote(args.run_id, safe="")
    url = f"{(args.url or DEFAULT_URL).rstrip('/')}/api/v1/runs/{run_id}"
    deadline = time.monotonic() + args.wait
    status, doc = 0, {}
    while True:
        request = urllib.request.Request(url)
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, doc = answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as exc:
            status, doc = exc.code, {}
        except OSError as exc:
            status, doc = 0, {"error": str(exc)}
        if status == 200 or status in (401, 403) or time.monotonic() >= deadline:
            break
        time.sleep(min(2.0, max(0.1, deadline - time.monotonic())))
    if status != 200:
        why = {202: "still being evaluated", 404: "unknown run", 401: "wrong or missing API key"}
        print(
            inert(
                f"lineage-quality gate: run {args.run_id}: "
                f"{why.get(status, doc.get('error') or f'HTTP {status}')} (after {args.wait:g}s)"
            ),
            file=sys.stderr,
        )
        return 2
    rows = doc.get("verdicts") or []
    from lineage_quality.cli.gate_shared import decide_rows

    return decide_rows(args, rows)


def _key(args: argparse.Namespace) -> str | None:
    key = os.environ.get("LINEAGE_QUALITY_API_KEY")
    if args.api_key_file:
        key = Path(args.api_key_file).read_text().strip()
    return key or None


def _dataset(args: argparse.Namespace) -> int:
    """`gate --dataset`: the latest write of the dataset, from the history store (or, with
    `--url` and no `--history`, from a producer's API: the same decision, made there)."""
    import json

    if args.url is not None and args.history is None:
        from lineage_quality.cli.gate_remote import dataset_gate

        return dataset_gate(args.url, args.dataset, _key(args), args.output)

    from lineage_quality.errors import ConfigError
    from lineage_quality.history.postgres import postgres_url
    from lineage_quality.inert import inert
    from lineage_quality.lineage.gate import UNKNOWN, GateVerdict, decide
    from lineage_quality.lineage.store import open_lineage

    name = args.dataset
    verdict: GateVerdict
    where = str(args.history or DEFAULT_HISTORY)
    if not postgres_url(where) and not Path(where).exists():
        verdict = GateVerdict(
            UNKNOWN,
            f"{name}: cannot tell: no history store at {where} (pass serve's --history)",
            {"dataset": name, "status": "unknown", "exit": UNKNOWN, "error": "no store"},
        )
    else:
        try:
            store = open_lineage(where, read_only=True, password_file=args.history_password_file)
        except ConfigError as exc:
            verdict = GateVerdict(
                UNKNOWN,
                f"{name}: cannot tell: {exc}",
                {"dataset": name, "status": "unknown", "exit": UNKNOWN, "error": str(exc)},
            )
        else:
            try:
                found = store.find(name)
                if len(found) > 1:
                    verdict = GateVerdict(
                        UNKNOWN,
                        f"{name}: cannot tell: it names {len(found)} datasets "
                        f"({', '.join(found)}); give namespace:name",
                        {"dataset": name, "status": "ambiguous", "exit": UNKNOWN,
                         "candidates": found},
                    )  # fmt: skip
                else:
                    key = found[0] if found else name
                    verdict = decide(key, store.latest(key) if found else None)
            finally:
                store.close()
    # names, rules and runs come from events: no escape sequence reaches the terminal
    if args.output == "json":
        print(inert(json.dumps(verdict.doc, ensure_ascii=True)))
    else:
        print(inert(verdict.line))
    return verdict.code
