"""bench/thread_cpu.py: /proc's files parsed, threads grouped, CPU per event (pure Python; the
measurement itself is bench/kafka_threads.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from thread_cpu import (  # noqa: E402
    Measured,
    Reading,
    group,
    parse_machine,
    parse_schedstat,
    parse_stat,
    per_event,
    python_names,
    table,
)


def stat_line(pid: int, comm: str, ppid: int, utime: int, stime: int) -> str:
    # proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime ...
    return f"{pid} ({comm}) S {ppid} 1 1 0 -1 4194560 10 0 0 0 {utime} {stime} 7 9 20 0 4 0\n"


def test_a_stat_line_whose_comm_holds_spaces_and_parentheses() -> None:
    stat = parse_stat(stat_line(42, "a (b) c)", 7, 120, 30))
    assert (stat.comm, stat.ppid, stat.ticks) == ("a (b) c)", 7, 150)


def test_schedstat_is_nanoseconds_on_the_cpu() -> None:
    assert parse_schedstat("211180500 174072074 204\n") == pytest.approx(0.2111805)


def test_the_machine_is_busy_but_when_idle_waiting_for_io_or_stolen() -> None:
    text = "cpu  100 20 30 400 50 6 7 8 90 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n"
    # user nice system idle iowait irq softirq steal guest guest_nice: guest is in user already
    assert parse_machine(text) == (163, 8, 621)


def test_python_names_from_a_py_spy_dump() -> None:
    dump = json.dumps(
        [
            {"pid": 5, "thread_name": "kafka-intake", "os_thread_id": 7, "frames": []},
            {"pid": 5, "thread_name": "MainThread", "os_thread_id": 5, "frames": []},
            {"pid": 5, "thread_name": None, "os_thread_id": 9, "frames": []},
            {"pid": 5, "thread_name": "lost", "os_thread_id": None, "frames": []},
        ]
    )
    assert python_names(dump) == {7: "kafka-intake", 5: "MainThread"}


def test_threads_group_by_name_with_their_numbers_as_a_star() -> None:
    names = {11: "lq-worker-3", 12: "Thread-7 (serve_forever)", 13: "kafka-intake"}
    assert group(10, 11, "python", names) == "lq-worker-*"
    assert group(10, 12, "python", names) == "Thread-* (serve_forever)"
    assert group(10, 13, "python", names) == "kafka-intake"
    assert group(10, 14, "rdk:broker1", names) == "rdk:broker*"
    assert group(10, 15, "rdk:broker-1", names) == "rdk:broker-*"  # librdkafka's bootstrap
    assert group(10, 16, "python3.11", names) == "python3.11"  # a version, not a number
    assert group(10, 10, "python3.11", names) == "python3.11 (main)"  # no py-spy name
    assert group(10, 10, "python", {10: "MainThread"}) == "MainThread"


def reading(
    threads: dict[tuple[int, int], tuple[str, float]],
    children: dict[int, tuple[str, float]],
    broker: float,
    busy: float,
    total: float,
    steal: float = 0.0,
) -> Reading:
    return Reading(threads, children, broker, busy, steal, total)


def test_cpu_per_event_by_group_the_broker_and_the_machine() -> None:
    start = reading(
        {(1, 1): ("python", 2.0), (1, 2): ("python", 1.0), (1, 3): ("python", 1.0),
         (1, 4): ("rdk:main", 0.5), (1, 9): ("python", 3.0)},
        {50: ("java", 10.0)}, broker=100.0, busy=1000.0, total=4000.0,
    )  # fmt: skip
    end = reading(
        {(1, 1): ("python", 2.0), (1, 2): ("python", 1.3), (1, 3): ("python", 1.1),
         (1, 4): ("rdk:main", 0.5), (1, 5): ("rdk:broker1", 0.2)},  # 5 began, 9 ended
        {50: ("java", 10.1), 51: ("java", 0.05)},
        broker=100.4, busy=1001.6, total=4002.0, steal=0.1,
    )  # fmt: skip
    names = {2: "lq-worker-0", 3: "lq-worker-1", 1: "MainThread"}
    cpu = per_event(start, end, 1000, names)
    assert cpu.threads == {"lq-worker-*": 400.0, "rdk:broker*": 200.0, "MainThread": 0.0,
                           "rdk:main": 0.0}  # fmt: skip
    assert list(cpu.threads) == ["lq-worker-*", "rdk:broker*", "MainThread", "rdk:main"]
    assert cpu.thread_counts == {"MainThread": 1, "lq-worker-*": 2, "rdk:main": 1,
                                 "rdk:broker*": 1}  # fmt: skip
    assert cpu.threads_total == 600.0
    assert cpu.children == {"java": 150.0}
    assert (cpu.broker, cpu.machine, cpu.machine_busy, cpu.machine_steal) == (
        400.0, 1600.0, 0.8, 0.05
    )  # fmt: skip


def test_the_table_has_every_round_of_each_case_in_turn() -> None:
    def measured(case: str, per_s: float, threads: dict[str, float]) -> Measured:
        start = reading({}, {}, 0.0, 0.0, 2.0)
        end = reading({(1, 1): ("rdk:main", 0.0)}, {}, 0.1, 1.0, 4.0)
        cpu = per_event(start, end, 1000, {})
        return Measured(case, per_s, 60.0, attrs.evolve(cpu, threads=threads))

    rows = [
        measured("relay", 18_000.0, {"rdk:broker*": 15.0}),
        measured("serve", 4_700.0, {"rdk:broker*": 150.0, "kafka-intake": 45.5}),
        measured("relay", 19_500.4, {"rdk:broker*": 16.0}),
        measured("serve", 5_100.0, {"rdk:broker*": 120.0, "kafka-intake": 44.0}),
    ]
    lines = table(rows)
    assert lines[0] == "| CPU us per event (unless named) | relay | serve |"
    assert "| events/s | 18,000 / 19,500 | 4,700 / 5,100 |" in lines
    assert "| thread rdk:broker* | 15.0 / 16.0 | 150.0 / 120.0 |" in lines
    assert "| thread kafka-intake | - / - | 45.5 / 44.0 |" in lines
    assert lines.index("| thread rdk:broker* | 15.0 / 16.0 | 150.0 / 120.0 |") < lines.index(
        "| thread kafka-intake | - / - | 45.5 / 44.0 |"
    )
    assert "| broker JVM | 100 / 100 | 100 / 100 |" in lines
    assert "| machine busy, % of its cores | 50 / 50 | 50 / 50 |" in lines
