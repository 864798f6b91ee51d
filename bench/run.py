"""`make bench`: this engine side by side with its peers and the floors, on seeded data.

    .venv/bin/python bench/run.py [--sizes 1000000,10000000] [--repeat 3] [--systems ...]
                                  [--budget 60] [--limit 600] [--warm-up 2] [--no-producer]
                                  [--out BENCHMARKS.md]

Every system runs in a worker process of its own virtualenv (bench/worker.py), all with the
Spark settings of bench/settings.py. Workers stay up for the whole run. Before the first case
every worker runs every chosen rule set `--warm-up` times on the 1M rows, untimed (the JIT's
warm-up, the same for all, whichever case comes first); each case is then warmed up once per
system, and timed `--repeat` times with the systems interleaved (the order rotates
each round). A system whose warm-up takes longer than --budget seconds is timed by that one
run (reported so); one without an answer after --limit seconds is stopped, its worker started
again, and the case reported as stopped. Verdicts are compared with this engine's, rule by
rule, and every disagreement or unsupported rule is reported. Then the producer's benchmarks
(bench/producer.py), and BENCHMARKS.md is written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from rulesets import ruleset  # noqa: E402

sys.path.insert(0, str(ROOT / "python"))
from lineage_quality.evaluation.spark_line import running_line  # noqa: E402

# Each Spark line has its own peers (bench/peers/<line>/*.txt pin them; make bench-peers SPARK=)
LINE = running_line()
PEERS = HERE / (".peers" if LINE.name == "3.5" else f".peers-spark{LINE.name}")
DATA = HERE / "data"
RESULTS = HERE / "results"

# system -> (virtualenv, label); floors and ours run in the project's own virtualenv
SYSTEMS: dict[str, tuple[str, str]] = {
    "floor_a": ("main", "floor (a): one bare aggregation"),
    "floor_b": ("main", "floor (b): same metrics, one hand-written aggregation"),
    "floor_c": ("main", "floor (c): (a) + one groupBy().count() per key set"),
    "ours": ("main", "lineage-quality"),
    "ours_plain": ("main", "lineage-quality, JVM helpers off"),
    "ours_history": ("main", "lineage-quality, history kept (SQLite)"),
    # another checkout's engine, for before/after figures (systems/ours_base.py; not by default)
    "ours_base": ("main", "lineage-quality at LQ_BENCH_BASE"),
    "pydeequ": ("pydeequ", "PyDeequ"),
    "soda": ("soda", "Soda Core, no samples"),
    "soda_samples": ("soda", "Soda Core, failed-row samples"),
    "gx": ("gx", "Great Expectations"),
    "cuallee": ("cuallee", "cuallee"),
    "dqx": ("dqx", "DQX"),
}
FLOORS = ("floor_a", "floor_b", "floor_c")
SIDE_BY_SIDE = ("R10", "R30", "RU")
SCALING = ("F10", "F30", "F100")
WARM_UP_ROWS = 1_000_000  # the JIT warm-up's data (warm_up)
SCALING_SYSTEMS = ("floor_a", "floor_b", "ours", "ours_plain", "pydeequ")


def python_of(venv: str) -> Path:
    """The floors and ours run on this interpreter (the line's virtualenv: make bench SPARK=)."""
    return Path(sys.executable) if venv == "main" else PEERS / venv / "bin" / "python"


def _cpu_by_group() -> dict[int, float]:
    """CPU seconds (user + system) so far of every live process, summed by process group (each
    worker and its JVM are one group: start_new_session)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        group = int(fields[2])  # after the name: state, ppid, pgrp, ..., utime (12), stime (13)
        out[group] = out.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _machine() -> tuple[float, float]:
    """CPU seconds so far of the whole machine (every core, /proc/stat): busy, and stolen (the
    hypervisor ran someone else while this virtual machine had work)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle, steal = values[3] + values[4], values[7]  # idle + iowait, steal
    return (sum(values[:7]) - idle) / tick, steal / tick


class Worker:
    """One system's worker process. Its stdout is read on a thread, so an answer can be waited
    for with a time limit; a worker past the limit is killed and started again."""

    def __init__(self, system: str) -> None:
        self.system = system
        self.log = open(RESULTS / f"{system}.stderr", "w")  # noqa: SIM115 - lives with the worker
        self._start()

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [str(python_of(SYSTEMS[self.system][0])), str(HERE / "worker.py"), self.system],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            cwd=str(HERE),
            start_new_session=True,  # its own process group: a kill takes the JVM with it
        )
        self.answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.answers), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen[str], answers: queue.Queue[dict[str, Any] | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("@@ "):
                answers.put(json.loads(line[3:]))
        answers.put(None)  # the worker exited

    def ask(self, command: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.restart()
            return {"error": f"stopped after {timeout:.0f} s without an answer", "timeout": timeout}
        except BrokenPipeError:
            answer = None
        if answer is None:
            self.restart()
            return {"error": f"worker exited (see {RESULTS / (self.system + '.stderr')})"}
        return answer

    def restart(self) -> None:
        self._kill()
        self._start()

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.stdin:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._kill()
        self.log.close()


@dataclass
class Case:
    rows: int
    rules: str
    times: dict[str, list[float]] = field(default_factory=dict)
    verdicts: dict[str, dict[str, bool | None]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # systems whose warm-up took longer than the budget: timed by that one run, not repeated
    once: list[str] = field(default_factory=list)
    # per timed run: CPU s of the system's own worker + JVM, of the other workers, of the machine
    cpu: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def best(self, system: str) -> float | None:
        t = self.times.get(system)
        return min(t) if t else None

    def median(self, system: str) -> float | None:
        t = self.times.get(system)
        return statistics.median(t) if t else None


def run_case(
    workers: dict[str, Worker], case: Case, path: Path, repeat: int, budget: float, limit: float
) -> None:
    """Warm-up, then `repeat` interleaved timed rounds. A system whose warm-up takes more than
    `budget` seconds keeps that one run as its time (reported as a single run); one that gives
    no answer within `limit` seconds is stopped and reported as slower than the limit."""
    command = {"op": "run", "data": str(path), "ruleset": case.rules}
    live = [s for s in workers if s != "floor_c" or case.rules == "RU"]
    for system in live:  # warm-up: JIT, file listing, library start-up
        answer = workers[system].ask(command, timeout=limit)
        if "error" in answer:
            case.errors[system] = answer["error"]
        else:
            case.verdicts[system] = answer["verdicts"]
            if answer["seconds"] > budget:
                case.times[system] = [answer["seconds"]]
                case.once.append(system)
    live = [s for s in live if s not in case.errors and s not in case.once]
    for round_ in range(repeat):
        order = live[round_ % len(live) :] + live[: round_ % len(live)] if live else []
        for system in order:
            if system in case.errors:
                continue
            before, (busy, stolen) = _cpu_by_group(), _machine()
            answer = workers[system].ask(command, timeout=limit)
            after, (busy_after, stolen_after) = _cpu_by_group(), _machine()
            if "error" in answer:
                case.errors[system] = answer["error"]
                case.times.pop(system, None)
                continue
            case.times.setdefault(system, []).append(answer["seconds"])
            spent = {g: t - before.get(g, 0.0) for g, t in after.items()}
            own = workers[system].proc.pid
            others = sum(spent.get(w.proc.pid, 0.0) for s, w in workers.items() if s != system)
            case.cpu.setdefault(system, []).append(
                {"own": round(spent.get(own, 0.0), 2), "others": round(others, 2),
                 "machine": round(busy_after - busy, 2), "stolen": round(stolen_after - stolen, 2)}
            )  # fmt: skip
    print(f"{case.rules} {case.rows:,} rows:", flush=True)
    for system in case.times:
        b, m = case.best(system), case.median(system)
        if b is not None and m is not None:
            runs = "1 run" if system in case.once else f"median {m:7.2f} s"
            cpu = case.cpu.get(system) or [{}]
            mine = statistics.median(c.get("own", 0.0) for c in cpu)
            others = max(c.get("others", 0.0) for c in cpu)
            stolen = max(c.get("stolen", 0.0) for c in cpu)
            print(
                f"  {system:14s} min {b:7.2f} s  {runs}  CPU {mine:6.2f} s; meanwhile up to"
                f" {others:5.2f} s other workers' CPU, {stolen:5.2f} s stolen",
                flush=True,
            )
    for system, error in case.errors.items():
        print(f"  {system:14s} ERROR {error[:200]}", flush=True)


def warm_up(
    workers: dict[str, Worker], path: Path, rulesets: list[str], rounds: int, limit: float
) -> None:
    """The same JIT warm-up for every system before the first case: `rounds` runs of every rule
    set on the small data, untimed. A case's own warm-up is one run; without this the first case
    was timed in a colder JVM than the later ones (F10 at 10M: 2.45 s first, 1.84 s when the same
    JVM ran it again after F100), which made 10 -> 100 rules look cheaper alone than in
    the complete run."""
    for _ in range(rounds):
        for rules in rulesets:
            command = {"op": "run", "data": str(path), "ruleset": rules}
            for system, worker in workers.items():
                if system == "floor_c" and rules != "RU":
                    continue
                if rules in SCALING and system not in SCALING_SYSTEMS:
                    continue
                worker.ask(command, timeout=limit)  # an error shows again in the timed case


def disagreements(case: Case) -> list[str]:
    """Each system's verdicts against this engine's, rule by rule."""
    ours = case.verdicts.get("ours") or {}
    out = []
    for system, verdicts in case.verdicts.items():
        if system in ("ours", "floor_a", "floor_c"):
            continue
        wanted = [r["id"] for r in ruleset(case.rules)]
        if system == "floor_b":
            wanted = [r["id"] for r in ruleset(case.rules) if r["kind"] != "unique"]
        for rid in wanted:
            theirs = verdicts.get(rid, "missing")
            if theirs is None:
                out.append(f"{system}: {rid} cannot be expressed")
            elif theirs == "missing":
                out.append(f"{system}: {rid} has no verdict")
            elif theirs != ours.get(rid):
                mine = _word(ours.get(rid))
                out.append(f"{system}: {rid} {_word(theirs)}, lineage-quality {mine}")
    return out


def record(case: Case, budget: float) -> dict[str, Any]:
    return case.__dict__ | {"disagreements": disagreements(case), "budget": budget}


def _word(value: Any) -> str:
    return {True: "passes", False: "fails"}.get(value, str(value))


def ensure_data(sizes: list[int], folder: Path = DATA) -> dict[int, Path]:
    """The data sets of these sizes under `folder`, each generated where it is missing."""
    from data import ensure
    from settings import session

    spark = session({})
    try:
        return {rows: ensure(spark, rows, folder) for rows in sizes}
    finally:
        spark.stop()


def available(systems: list[str]) -> tuple[list[str], dict[str, str]]:
    ready, missing = [], {}
    for system in systems:
        python = python_of(SYSTEMS[system][0])
        if python.exists():
            ready.append(system)
        else:
            missing[system] = f"no virtualenv at {python.parent.parent} (make bench-peers)"
    return ready, missing


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        memory = f"{int(mem) / 1024 / 1024:.0f} GiB"
    except OSError:
        memory = "unknown"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "java": java.splitlines()[0] if java else "unknown",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--systems", default=",".join(s for s in SYSTEMS if s != "ours_base"))
    parser.add_argument("--rulesets", default=",".join(SIDE_BY_SIDE + SCALING))
    parser.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="a warm-up slower than this (s) is the system's only timed run in that case",
    )
    parser.add_argument(
        "--limit",
        type=float,
        default=600.0,
        help="a run without an answer after this (s) is stopped and reported as such",
    )
    parser.add_argument(
        "--warm-up", type=int, default=2,
        help="untimed rounds of every rule set on the 1M data, for every system, before timing",
    )  # fmt: skip
    parser.add_argument("--no-producer", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    args = parser.parse_args()
    if args.repeat < 3:
        print("note: fewer than 3 runs per case; BENCHMARKS.md will say so", file=sys.stderr)
    sizes = [int(s) for s in args.sizes.split(",")]
    RESULTS.mkdir(exist_ok=True)
    started = time.time()
    paths = ensure_data(sorted({*sizes, WARM_UP_ROWS}))
    systems, missing = available(args.systems.split(","))
    workers = {s: Worker(s) for s in systems}
    versions = {}
    for system, worker in workers.items():
        answer = worker.ask({"op": "version"})
        versions[system] = answer.get("version") or f"ERROR {answer.get('error')}"
        if "error" in answer:
            missing[system] = answer["error"]
    for system in list(workers):
        if system in missing:
            workers.pop(system).close()
    cases: list[Case] = []
    try:
        warm_up(workers, paths[WARM_UP_ROWS], args.rulesets.split(","), args.warm_up, args.limit)
        for rows in sizes:
            for rules in args.rulesets.split(","):
                case = Case(rows, rules)
                chosen = workers
                if rules in SCALING:
                    chosen = {s: w for s, w in workers.items() if s in SCALING_SYSTEMS}
                run_case(chosen, case, paths[rows], args.repeat, args.budget, args.limit)
                cases.append(case)
                # kept after every case: a run stopped part-way still leaves what it measured
                partial = [record(c, args.budget) for c in cases]
                (RESULTS / "partial.json").write_text(json.dumps(partial, indent=1))
    finally:
        for worker in workers.values():
            worker.close()
    producer: dict[str, Any] = {}
    if not args.no_producer:
        from suite import run_producer

        producer = run_producer(RESULTS)
    doc = {
        "machine": machine(),
        "started": started,
        "seconds": time.time() - started,
        "repeat": args.repeat,
        "budget": args.budget,
        "limit": args.limit,
        "warm_up": args.warm_up,
        "versions": versions,
        "missing": missing,
        "cases": [record(c, args.budget) for c in cases],
        "producer": producer,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }
    (RESULTS / "latest.json").write_text(json.dumps(doc, indent=1))
    from report import write_report

    write_report(doc, Path(args.out))
    print(f"wrote {args.out} and {RESULTS / 'latest.json'} in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
