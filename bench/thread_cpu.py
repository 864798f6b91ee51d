"""Per-thread CPU per event, from two readings of /proc around a burst: the parsing of /proc's
files, the grouping of threads by name and the arithmetic (pure; bench/kafka_threads.py reads
/proc and runs the Kafka path, tests/unit/test_bench_threads.py checks this).

A thread's group is its Python name where py-spy gave one (`py-spy dump --json`), else its
`comm` (librdkafka names its threads `rdk:main`, `rdk:broker<node id>`, `rdk:broker-1` for the
bootstrap connection; CPython 3.11 leaves its threads the interpreter's `comm`); a thread's number
becomes `*`, so that `lq-worker-0..3`, or one broker thread per node, make one group. A process's
librdkafka clients (`serve`: Kafka in's consumer and Kafka out's producers) name their threads
alike: /proc cannot tell them apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

import attrs

# a thread's number: at the end of its name, or before the target CPython adds in parentheses
# (`Thread-7 (serve_forever)`); not one that is part of a version (`python3.11`)
_NUMBER = re.compile(r"(?<=[A-Za-z:_-])\d+(?=$| \()")


@attrs.frozen
class Stat:
    """What bench needs of a /proc/PID[/task/TID]/stat line (proc(5))."""

    comm: str
    ppid: int
    ticks: int  # utime + stime, clock ticks


@attrs.frozen
class Reading:
    """One look at the relaying processes, the broker and the machine."""

    # (pid, tid) -> (comm, CPU seconds) of each thread of each relaying process
    threads: Mapping[tuple[int, int], tuple[str, float]]
    # pid -> (comm, CPU seconds) of the relaying processes' descendants (serve's Spark JVM)
    children: Mapping[int, tuple[str, float]]
    broker: float  # CPU seconds of the broker's JVM
    busy: float  # the machine's busy CPU seconds, all cores (/proc/stat)
    steal: float  # seconds the hypervisor gave this machine's cores to others
    total: float  # the machine's CPU seconds, all cores, busy, stolen or idle


@attrs.frozen
class PerEvent:
    """Microseconds of CPU per event of the burst."""

    threads: Mapping[str, float]  # each group of the relaying processes' threads, largest first
    thread_counts: Mapping[str, int]  # how many threads each group had
    threads_total: float
    children: Mapping[str, float]  # the relaying processes' descendants, by comm
    broker: float  # the broker's JVM
    machine: float  # every process on the machine (the bench's own included)
    machine_busy: float  # the share of the machine's cores busy over the burst
    machine_steal: float  # the share stolen by the hypervisor: a neighbour outside this machine


def parse_stat(text: str) -> Stat:
    """A stat line; its `comm` may hold spaces and parentheses, so it ends at the last ')'."""
    head, _, tail = text.rpartition(")")
    fields = tail.split()
    # after the comm: state(3) ppid(4) ... utime(14) stime(15), counted from 1 with pid and comm
    return Stat(head.partition("(")[2], int(fields[1]), int(fields[11]) + int(fields[12]))


def parse_schedstat(text: str) -> float:
    """CPU seconds of a task from its schedstat (the first field, nanoseconds on the CPU): finer
    than stat's clock ticks, which a thread's share of a one-second burst is a few of."""
    return int(text.split()[0]) / 1e9


def parse_machine(text: str) -> tuple[int, int, int]:
    """(busy, steal, total) clock ticks of all cores from /proc/stat's `cpu` line: idle and
    iowait are not busy, nor is steal (the hypervisor ran something else); guest time is inside
    user time already, so not added again."""
    line = next(ln for ln in text.splitlines() if ln.startswith("cpu "))
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in line.split()[1:9])
    busy = user + nice + system + irq + softirq
    return busy, steal, busy + steal + idle + iowait


def python_names(dump: str) -> dict[int, str]:
    """OS thread id -> Python thread name, from `py-spy dump --json`."""
    return {
        int(t["os_thread_id"]): str(t["thread_name"])
        for t in json.loads(dump)
        if t.get("os_thread_id") is not None and t.get("thread_name")
    }


def group(pid: int, tid: int, comm: str, names: Mapping[int, str]) -> str:
    """The group a thread counts in."""
    name = names.get(tid)
    if name is None and tid == pid:
        return f"{comm} (main)"
    return _NUMBER.sub("*", comm if name is None else name, count=1)


def per_event(start: Reading, end: Reading, events: int, names: Mapping[int, str]) -> PerEvent:
    """Microseconds of CPU per event between `start` and `end`. A thread that began between them
    counts from zero; one that ended is not seen (the relaying processes' threads live as long
    as they do)."""

    def us(seconds: float) -> float:
        return round(1e6 * seconds / events, 1)

    groups: dict[str, float] = {}
    counts: dict[str, int] = {}
    for (pid, tid), (comm, seconds) in end.threads.items():
        key = group(pid, tid, comm, names)
        spent = seconds - start.threads.get((pid, tid), (comm, 0.0))[1]
        groups[key] = groups.get(key, 0.0) + spent
        counts[key] = counts.get(key, 0) + 1
    children: dict[str, float] = {}
    for pid, (comm, seconds) in end.children.items():
        children[comm] = children.get(comm, 0.0) + seconds - start.children.get(pid, ("", 0.0))[1]
    busy, total = end.busy - start.busy, end.total - start.total
    return PerEvent(
        threads={k: us(v) for k, v in sorted(groups.items(), key=lambda kv: -kv[1])},
        thread_counts=counts,
        threads_total=us(sum(groups.values())),
        children={k: us(v) for k, v in sorted(children.items())},
        broker=us(end.broker - start.broker),
        machine=us(busy),
        machine_busy=round(busy / total, 3) if total > 0 else 0.0,
        machine_steal=round((end.steal - start.steal) / total, 3) if total > 0 else 0.0,
    )


@attrs.frozen
class Measured:
    """One case of one round: its burst's events/s and where its CPU went."""

    case: str
    events_per_second: float
    process: float  # us of CPU per event of the relaying processes, kafka_path's own figure
    per_event: PerEvent


def table(rows: list[Measured]) -> list[str]:
    """Markdown: a column per case, a line per figure, each cell every round's value in turn
    ("-" where a round had no such thread); thread groups largest first."""
    cases = list(dict.fromkeys(r.case for r in rows))

    def line(label: str, value: Callable[[Measured], float | None], fmt: str) -> str:
        cells = [
            " / ".join(
                "-" if (v := value(r)) is None else format(v, fmt) for r in rows if r.case == c
            )
            for c in cases
        ]
        return f"| {label} | " + " | ".join(cells) + " |"

    def of(name: str, threads: bool) -> Callable[[Measured], float | None]:
        return lambda r: (r.per_event.threads if threads else r.per_event.children).get(name)

    def largest(name: str) -> float:
        return max(r.per_event.threads.get(name, 0.0) for r in rows)

    threads = sorted({n for r in rows for n in r.per_event.threads}, key=lambda n: -largest(n))
    children = sorted({n for r in rows for n in r.per_event.children})
    return [
        "| CPU us per event (unless named) | " + " | ".join(cases) + " |",
        "|---|" + "---:|" * len(cases),
        line("events/s", lambda r: r.events_per_second, ",.0f"),
        line("relaying process(es)", lambda r: r.process, ".0f"),
        *(line(f"thread {n}", of(n, True), ".1f") for n in threads),
        line("threads, all", lambda r: r.per_event.threads_total, ".0f"),
        *(line(f"child {n}", of(n, False), ".1f") for n in children),
        line("broker JVM", lambda r: r.per_event.broker, ".0f"),
        line("machine (all processes)", lambda r: r.per_event.machine, ".0f"),
        line("machine busy, % of its cores", lambda r: 100 * r.per_event.machine_busy, ".0f"),
        line("stolen by the hypervisor, %", lambda r: 100 * r.per_event.machine_steal, ".1f"),
    ]
