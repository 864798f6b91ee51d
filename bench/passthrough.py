"""Only the pass-through part of bench/producer.py, on events captured once and kept, with the
CPU time each process spent per event: `python bench/passthrough.py EVENTS.jsonl [--rounds N]`.
The events file is what the listener's file transport wrote (bench/producer.py's
`capture_events`); when it does not exist it is captured first (needs Spark and bench/data).
`--py-spy` profiles serve meanwhile; `--spool-first` measures, in each round, also the same
`serve` with write-through off (every event spooled first, as before it). `--upstream-off` measures, in each round, also the same `serve` with
`--upstream off` (no lineage kept: the overhead of issue 39's bookkeeping is the difference).
Each of the 4 senders posts runs of its own (bench/producer.py's `own_runs`). Prints one JSON
line per round."""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import producer


def _switches(pid: int) -> int:
    """Context switches (voluntary and not) of every thread of process `pid` so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        total += sum(int(line.split()[1]) for line in text.splitlines() if "ctxt_switches" in line)
    return total


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pass_through(
    tmp: Path, events: list[bytes], py_spy: list[str] | None, serve_args: tuple[str, ...] = ()
) -> dict[str, Any]:
    """bench/producer.py's `pass_through`, measuring the CPU of serve, sink and clients during
    the POSTs to serve (until the sink has every event); `py_spy`: a `py-spy record` command
    line, run on serve for that time (`--pid` is added)."""
    bodies = producer.own_runs(events, producer.CLIENTS, producer.EVENTS, "measured")
    warm = producer.own_runs(events, producer.CLIENTS, 300, "warm-up")
    with producer.serving(tmp, *serve_args) as (sink, sink_port, serve, port):
        producer.post_all(sink_port, warm)  # warm-up of both
        producer.post_all(port, warm)
        bare = producer.post_all(sink_port, bodies)
        spy = None
        if py_spy:
            spy = subprocess.Popen([*py_spy, "--pid", str(serve.pid)])
            time.sleep(1)  # attached
        cpu_of = producer.cpu_seconds
        cpu = (cpu_of(serve.pid), cpu_of(sink.pid), _own_cpu())
        serve_system = producer.user_system(serve.pid)[1]
        switches = _switches(serve.pid)
        ours = producer.forward_all(port, sink_port, bodies)
        spent = (cpu_of(serve.pid) - cpu[0], cpu_of(sink.pid) - cpu[1], _own_cpu() - cpu[2])
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        ours["switches_per_event_serve"] = (_switches(serve.pid) - switches) / len(bodies)
        ours["cpu_ms_per_event_serve_system"] = (
            1000 * (producer.user_system(serve.pid)[1] - serve_system) / len(bodies)
        )
        for name, seconds in zip(("serve", "sink", "clients"), spent, strict=True):
            ours[f"cpu_ms_per_event_{name}"] = 1000 * seconds / len(bodies)
    return {"bare": bare, "serve": ours}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("events", type=Path)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--py-spy",
        help="py-spy record command line, e.g. 'py-spy record --gil --format raw -o out.txt'",
        default="",
    )
    parser.add_argument(
        "--spool-first",
        action="store_true",
        help="each round also with every event spooled first (serve --write-through-below 0), "
        "as before write-through: printed as a second line, 'spool first'",
    )
    parser.add_argument(
        "--upstream-off",
        action="store_true",
        help="each round also with no lineage kept (serve --upstream off): printed as a second "
        "line, 'upstream off'",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lq-pass-"))
    try:
        if not args.events.exists():
            captured = producer.capture_events(tmp, producer.HERE / "data" / "orders_1000000")
            args.events.write_bytes(b"\n".join(captured) + b"\n")
        events = [e for e in args.events.read_bytes().splitlines() if e.strip()]
        for _ in range(args.rounds):
            result = pass_through(tmp, events, shlex.split(args.py_spy) or None)
            print(json.dumps({k: _rounded(v) for k, v in result.items()}), flush=True)
            if args.spool_first:
                result = pass_through(tmp, events, None, ("--write-through-below", "0"))
                result = {k: _rounded(v) for k, v in result.items()}
                print(json.dumps({"spool first": result}), flush=True)
            if args.upstream_off:
                result = pass_through(tmp, events, None, ("--upstream", "off"))
                result = {k: _rounded(v) for k, v in result.items()}
                print(json.dumps({"upstream off": result}), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _rounded(figures: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in figures.items()}


if __name__ == "__main__":
    main()
