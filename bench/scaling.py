"""`make bench-scaling` (part of `make bench`): R10, R30 and RU at 1M, 10M and 100M rows beside
floor (a), with the driver's peak memory, into the section "Scaling: 1M to 100M rows" of
BENCHMARKS.md (BENCHMARKS-spark4.md on SPARK=4).

    .venv/bin/python bench/scaling.py [--sizes 1000000,10000000,100000000] [--repeats 7,3,3]
        [--rulesets R10,R30,RU] [--warm-up 2] [--data bench/data] [--lock /tmp/heavy.lock]
        [--out BENCHMARKS.md]
    .venv/bin/python bench/scaling.py --render bench/results/scaling.json [--out BENCHMARKS.md]

bench/run.py's machinery: a worker process with its own SparkSession per system (floor (a) and
lineage-quality), the same JIT warm-up, each case warmed up once and timed with the two
interleaved, round by round. The data is bench/data.py's, generated once under `--data` (git
ignores bench/data/) and reused; 100M rows are ~2.7 GB. Before each case the workers' peak
memory is reset and after it read (bench/driver_memory.py). `--lock FILE` holds an flock on
FILE for each case (and the generation, the warm-up) only, so others sharing the machine can
run between cases. The results also go to bench/results/scaling[-spark4].json; `--render` writes
the section again from such a file, measuring nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import (  # noqa: E402
    DATA,
    LINE,
    RESULTS,
    Case,
    Worker,
    ensure_data,
    record,
    run_case,
    warm_up,
)
from scaling_report import put_section, section  # noqa: E402

SYSTEMS = ("floor_a", "ours")
WARM_UP_ROWS = 1_000_000


@contextlib.contextmanager
def held(lock: str | None) -> Iterator[None]:
    """An exclusive flock on `lock` for the block (nothing where there is no lock file)."""
    if not lock:
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def measure(
    workers: dict[str, Worker], rows: int, rules: str, path: Path, repeat: int, limit: float
) -> dict[str, Any]:
    """One case, its memory included: both workers' peaks reset before, read after."""
    resets = {s: w.ask({"op": "memory", "reset": True}) for s, w in workers.items()}
    case = Case(rows, rules)
    # no budget: at 100M rows every system is timed `repeat` times, however slow its warm-up
    run_case(workers, case, path, repeat, budget=limit, limit=limit)
    memory = {s: w.ask({"op": "memory"}) for s, w in workers.items()}
    return record(case, limit) | {
        "memory": memory,
        "reset_ok": all(r.get("reset_ok", False) for r in resets.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000,100000000")
    # 1M rows: a run takes ~0.2 s and two runs of the same code spread by +-7 %, more than the
    # differences measured there; 7 runs cost a few seconds. 100M: with 2 runs floor (a)'s
    # minimum moved by 10 % from one sitting to the next; a third costs ~1.5 min a line
    parser.add_argument("--repeats", default="7,3,3", help="timed runs per size, in order")
    parser.add_argument("--rulesets", default="R10,R30,RU")
    parser.add_argument("--warm-up", type=int, default=2)
    parser.add_argument("--limit", type=float, default=1800.0)
    parser.add_argument("--data", default=str(DATA), help="where the data sets are kept")
    parser.add_argument("--lock", help="a file to hold an flock on for each case")
    line_out = "BENCHMARKS.md" if LINE.name == "3.5" else f"BENCHMARKS-spark{LINE.name}.md"
    parser.add_argument("--out", default=str(HERE.parent / line_out))
    parser.add_argument("--render", help="a results file to write the section from, no run")
    args = parser.parse_args()
    if args.render:
        write(json.loads(Path(args.render).read_text()), Path(args.out))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    repeats = [int(r) for r in args.repeats.split(",")]
    if len(repeats) != len(sizes):
        parser.error(f"--repeats needs one count per size ({len(sizes)}), not {len(repeats)}")
    rulesets = args.rulesets.split(",")
    RESULTS.mkdir(exist_ok=True)
    folder = Path(args.data)
    from data import generation, size_on_disk

    started = time.time()
    with held(args.lock):
        paths = ensure_data(sorted({*sizes, WARM_UP_ROWS}), folder)
    data = [
        {"rows": n, "bytes": size_on_disk(paths[n]), **(generation(paths[n]) or {"rows": n})}
        for n in sizes
    ]
    workers = {s: Worker(s) for s in SYSTEMS}
    results: list[dict[str, Any]] = []
    json_out = RESULTS / (
        "scaling.json" if LINE.name == "3.5" else f"scaling-spark{LINE.name}.json"
    )
    try:
        versions = {s: w.ask({"op": "version"}) for s, w in workers.items()}
        for system, answer in versions.items():
            if "error" in answer:
                raise SystemExit(f"{system} did not start: {answer['error']}")
        with held(args.lock):
            warm_up(workers, paths[WARM_UP_ROWS], rulesets, args.warm_up, args.limit)
        for rows, repeat in zip(sizes, repeats, strict=True):
            for rules in rulesets:
                with held(args.lock):
                    results.append(measure(workers, rows, rules, paths[rows], repeat, args.limit))
                json_out.write_text(json.dumps(results, indent=1))  # what a stopped run measured
    finally:
        for worker in workers.values():
            worker.close()
    when = datetime.datetime.fromtimestamp(started, datetime.timezone.utc)
    doc = {
        "command": " ".join([_relative(sys.executable), "bench/scaling.py", *sys.argv[1:]]),
        "when": f"{when:%Y-%m-%d %H:%M}",
        "spark": versions["floor_a"]["version"].removeprefix("pyspark "),
        "seconds": time.time() - started,
        "warm_up": args.warm_up,
        "repeats": dict(zip(map(str, sizes), repeats, strict=True)),
        "data": data,
        "resets": [{"reset_ok": r["reset_ok"]} for r in results],
        "results": results,
    }
    json_out.write_text(json.dumps(doc, indent=1))
    write(doc, Path(args.out))
    print(f"and {json_out}, in {time.time() - started:.0f} s")


def _relative(path: str) -> str:
    """`path` from the checkout's root where it lies under it (the line's virtualenv)."""
    try:
        return str(Path(path).relative_to(HERE.parent))
    except ValueError:
        return path


def write(doc: dict[str, Any], out: Path) -> None:
    """The section of `doc` into the markdown file `out` (the rest of it left as it is)."""
    lines = section(doc)
    out.write_text(put_section(out.read_text() if out.exists() else "", lines))
    print("\n".join(lines))
    print(f"wrote the section into {out}")


if __name__ == "__main__":
    main()
