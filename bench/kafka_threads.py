"""Where the Kafka path's CPU goes, thread by thread: bench/kafka_path.py's burst (3,000 events
written at once to the input topic after as many unmeasured, relayed to the output topic), for
the bare relay and `serve` (and `serve` of another checkout, `--before`), one after the other in
each of `--rounds` rounds:

    flock /tmp/heavy.lock .venv/bin/python bench/kafka_threads.py EVENTS.jsonl \\
        [--rounds 3] [--events 6000] [--consumers 1] [--before CHECKOUT] \\
        [--serve-args="--workers 2"] [--py-spy PATH]

At the burst's first write and once the output topic holds it (`kafka_path`'s `watch`), /proc
is read: each thread of the relaying processes (its schedstat: nanoseconds on a CPU), their
descendants (`serve`'s Spark JVM), the broker's JVM, the machine's /proc/stat. Per case: the
burst's events/s and microseconds of CPU per event of each group of threads (bench/thread_cpu.py:
by Python name, from `py-spy dump` at the burst's end when py-spy is found, else by `comm`), the
broker's and the whole machine's. On this shared 2-core machine events/s move with the
neighbours' load from run to run; the CPU an event costs, per thread, much less.

Prints one JSON line per case and round, then a Markdown table of every round's figures. EVENTS
is the listener's captured events, as for bench/kafka_path.py (bench/producer.py
`capture_events`); the Kafka jars must be there (`make kafka-jars`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kafka_path  # noqa: E402
from thread_cpu import (  # noqa: E402
    Measured,
    Reading,
    parse_machine,
    parse_schedstat,
    parse_stat,
    per_event,
    python_names,
    table,
)

HZ = os.sysconf("SC_CLK_TCK")


def _threads(pid: int) -> dict[tuple[int, int], tuple[str, float]]:
    """(pid, tid) -> (comm, CPU seconds) of each thread of `pid`; none once it ended."""
    found: dict[tuple[int, int], tuple[str, float]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        task = Path(f"/proc/{pid}/task/{tid}")
        try:
            stat = parse_stat((task / "stat").read_text())
            schedstat = task / "schedstat"  # absent without the kernel's CONFIG_SCHED_INFO
            seconds = (
                parse_schedstat(schedstat.read_text()) if schedstat.exists() else stat.ticks / HZ
            )
        except OSError:  # the thread ended meanwhile
            continue
        found[(pid, int(tid))] = (stat.comm, seconds)
    return found


def _descendants(pids: list[int]) -> dict[int, tuple[str, float]]:
    """pid -> (comm, CPU seconds) of every descendant of `pids` (their threads included)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = parse_stat(Path(f"/proc/{entry}/stat").read_text())
            except OSError:
                continue
    found: dict[int, tuple[str, float]] = {}
    parents = set(pids)
    while parents:
        parents = {p for p, s in stats.items() if s.ppid in parents and p not in found}
        found.update({p: (stats[p].comm, stats[p].ticks / HZ) for p in parents})
    return found


def _process(pid: int) -> float:
    """CPU seconds of a process, all its threads."""
    try:
        return parse_stat(Path(f"/proc/{pid}/stat").read_text()).ticks / HZ
    except OSError:
        return 0.0


def read(pids: list[int], broker: int) -> Reading:
    busy, steal, total = parse_machine(Path("/proc/stat").read_text())
    threads: dict[tuple[int, int], tuple[str, float]] = {}
    for pid in pids:
        threads.update(_threads(pid))
    machine = (busy / HZ, steal / HZ, total / HZ)
    return Reading(threads, _descendants(pids), _process(broker), *machine)


class Watch:
    """kafka_path's `watch`: a reading at the burst's start and end; at the end (after the
    reading: py-spy stops the process a moment), the Python names of the threads."""

    def __init__(self, py_spy: str | None) -> None:
        self.py_spy = py_spy
        self.readings: dict[str, Reading] = {}
        self.names: dict[int, str] = {}

    def __call__(self, edge: str, pids: list[int], broker: int) -> None:
        self.readings[edge] = read(pids, broker)
        if edge == "end" and self.py_spy:
            for pid in pids:
                done = subprocess.run(
                    [self.py_spy, "dump", "--json", "--pid", str(pid)],
                    capture_output=True, text=True, timeout=120, check=False,
                )  # fmt: skip
                if done.returncode == 0:
                    self.names.update(python_names(done.stdout))
                else:
                    print(f"py-spy dump of {pid}: {done.stderr.strip()[:300]}", file=sys.stderr)


def measure(
    tmp: Path,
    events: list[bytes],
    case: str,
    consumers: int,
    count: int,
    extra: tuple[str, ...],
    code: Path | None,
    py_spy: str | None,
) -> tuple[Measured, dict[str, float]]:
    """One case's burst (`relay`: the bare relay), with kafka_path's own figures."""
    watch = Watch(py_spy)
    figures = kafka_path.kafka_path(
        tmp, events, consumers, extra, bare=case == "relay", burst=count, code=code, watch=watch
    )
    cpu = per_event(watch.readings["start"], watch.readings["end"], count, watch.names)
    measured = Measured(case, figures["burst_per_second"], figures["cpu_us_per_event"], cpu)
    return measured, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events", type=Path, help="the listener's captured events (JSON lines)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--events", type=int, default=kafka_path.EVENTS, dest="count",
                        help="events in the burst")  # fmt: skip
    parser.add_argument("--consumers", type=int, default=1, help="processes in the group")
    parser.add_argument("--before", type=Path, help="also `serve` of this checkout")
    parser.add_argument("--serve-args", default="", help="more options of serve, one string")
    parser.add_argument(
        "--py-spy", default=shutil.which("py-spy"), help="py-spy, for the Python threads' names"
    )
    args = parser.parse_args()
    if why := kafka_path.usable():
        sys.exit(why)
    if not args.py_spy:
        print("no py-spy: Python threads grouped by comm, not named", file=sys.stderr)
    events = [e for e in args.events.read_bytes().splitlines() if e.strip()]
    extra = tuple(args.serve_args.split())
    cases: list[tuple[str, Path | None]] = [("relay", None), ("serve", None)]
    if args.before is not None:
        cases.insert(1, ("before", args.before))
    rows: list[Measured] = []
    for round_ in range(1, args.rounds + 1):
        tmp = Path(tempfile.mkdtemp(prefix="lq-kafka-threads-"))
        try:
            for case, code in cases:
                measured, figures = measure(
                    tmp, events, case, args.consumers, args.count, extra, code, args.py_spy
                )
                rows.append(measured)
                line = {"round": round_, **attrs.asdict(measured), "kafka_path": figures}
                print(json.dumps(line), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{args.count} events a burst, {args.consumers} consumer(s), {args.rounds} round(s)")
    print("\n".join(table(rows)), flush=True)


if __name__ == "__main__":
    main()
