"""What an evaluated COMPLETE costs between the receiver and the sink, without Spark, the spool or
HTTP: events per second through the producer's own parse -> enrich -> serialize path, on a real
listener event (the largest COMPLETE of EVENTS.jsonl, e.g. demo-output/events.jsonl), with ten
results on each output.

    .venv/bin/python bench/parse_once.py demo-output/events.jsonl

`--chain before` runs the hops an evaluated COMPLETE went through before issue 27.2 (receiver
parse, the worker's plain parse, the rawjson parse for evaluation, enrich, serialize, and for a
transport other than plain http, the forwarder's parse), with whatever functions the checkout
has; run it in a checkout of that time for the before figures (see BENCHMARKS.md). Prints one
JSON line per transport kind: "http" (the fast path: the sink gets the text) and "other" (file,
console, kafka...: the transport also gets the event as a plain dict).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from lineage_quality import rawjson
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.forward import RawEvent
from lineage_quality.producer.receiver import decode
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of

LIMIT = 16 * 1024 * 1024


def results(event: dict[str, Any]) -> dict[Any, Any]:
    """Ten passing not-null rules on each output dataset."""
    rules = [
        Rule(id=f"r{i}", kind=RuleKind.NULL_VALUES, columns=["a"], severity="ERROR",
             threshold=Threshold(Operator.MUST_BE, 0), name=f"rule_{i}")
        for i in range(10)
    ]  # fmt: skip
    refs = [r for r in datasets_of(event) if r.role == "outputs"]
    return {ref: [verdict(rule, 0, 1000) for rule in rules] for ref in refs}


def now(body: bytes, res: Any, other: bool) -> None:
    """The path as the producer takes it: parsed once by the receiver, that tree evaluated,
    enriched, written once; a transport other than http gets a plain dict of that text."""
    _text, event = decode(body, None, LIMIT)
    out = rawjson.dumps(enrich(event, res))
    if other:
        RawEvent(out)


def before(body: bytes, res: Any, other: bool) -> None:
    """The hops before issue 27.2 (service.py then): receiver, worker, evaluation, forward."""
    text, _event = decode(body, None, LIMIT)  # the receiver's plain parse
    rawjson.loads_plain(text)  # the worker's plain parse (`_parse`)
    tree = rawjson.loads(text)  # again, numbers as written, for evaluation and enrich
    out = rawjson.dumps(enrich(tree, res))
    if other:
        RawEvent(out)  # the forwarder's parse


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("events", type=Path)
    parser.add_argument("--chain", choices=["now", "before"], default="now")
    parser.add_argument("-n", type=int, default=2000, help="events per round (best of 5 rounds)")
    args = parser.parse_args()
    lines = [line for line in args.events.read_bytes().splitlines() if line.strip()]
    body = max((line for line in lines if b'"COMPLETE"' in line), key=len)
    res = results(json.loads(body))
    path = now if args.chain == "now" else before
    for transport in ("http", "other"):
        best = 0.0
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(args.n):
                path(body, res, transport == "other")
            best = max(best, args.n / (time.perf_counter() - start))
        print(json.dumps({"chain": args.chain, "transport": transport, "bytes": len(body),
                          "events_per_second": round(best)}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
