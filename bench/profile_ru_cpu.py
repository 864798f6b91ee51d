"""RU beside floor (a), wall and the JVM's CPU seconds per run, and what the key sets add.

    .venv/bin/python bench/profile_ru_cpu.py [--rows 10000000] [--repeat 5] [--only NAMES]

One process, the bench's Spark settings and the engine's jar: floor (a) on RU's columns,
lineage-quality on R10, on RU and on RU's two uniqueness rules alone ("U"), interleaved after two
untimed rounds. Per system the min and median wall seconds and the JVM's CPU seconds (user and
system, from /proc) of each run, with their ratios to floor (a)'s, then the medians of the
system CPU seconds, the page faults and the young collections (the JVM's GC beans) of a run. On
a shared host the CPU seconds move less than the wall seconds with what else runs, so a change
of a few per cent in the key-set pass shows there first. `--only` keeps some of the systems
(comma-separated names). `--keys` adds what the key sets cost beside a bare read of their own
columns: "scan keys" (one count per key column: order_id, customer_id, created_at), "scan id"
and "scan pair" (those of one key set), "U id" and "U pair" (each uniqueness rule alone) and
"hash pair" (Spark's own xxhash64 of the pair, summed: the hashing alone).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import floor_a  # noqa: E402
import ours  # noqa: E402
from rulesets import ruleset  # noqa: E402
from settings import session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--keys", action="store_true", help="add the key sets' decomposition")
    args = parser.parse_args()
    spark = session(ours.conf())
    ru, r10 = ruleset("RU"), ruleset("R10")
    unique = [r for r in ru if r["kind"] == "unique"]
    systems: dict[str, Callable[[Any], Any]] = {
        "floor (a)": lambda df: floor_a.run(spark, df, ru),
        "R10": lambda df: ours.run(spark, df, r10),
        "RU": lambda df: ours.run(spark, df, ru),
        "U": lambda df: ours.run(spark, df, unique),
    }
    if args.keys:
        from pyspark.sql import functions as F

        def counts(*columns: str) -> Callable[[Any], Any]:
            return lambda df: df.agg(*[F.count(c) for c in columns]).collect()

        systems |= {
            "scan keys": counts("order_id", "customer_id", "created_at"),
            "scan id": counts("order_id"),
            "scan pair": counts("customer_id", "created_at"),
            "U id": lambda df: ours.run(spark, df, unique[:1]),
            "U pair": lambda df: ours.run(spark, df, unique[1:]),
            "hash pair": lambda df: df.agg(
                F.sum(F.xxhash64("customer_id", "created_at"))
            ).collect(),
        }
    if args.only:
        systems = {k: v for k, v in systems.items() if k in args.only.split(",")}
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    tick = os.sysconf("SC_CLK_TCK")

    young = [
        g
        for g in spark._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
        if "Young" in g.getName()
    ]

    def stat() -> tuple[float, float, int, int]:
        """The JVM's user + system CPU seconds, system CPU seconds, page faults, young GCs."""
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        user, system = int(fields[11]) / tick, int(fields[12]) / tick
        faults = int(fields[7]) + int(fields[9])  # minflt, majflt
        return user + system, system, faults, sum(int(g.getCollectionCount()) for g in young)

    data = str(HERE / "data" / f"orders_{args.rows}")

    def once(run: Callable[[Any], Any]) -> tuple[float, tuple[float, ...]]:
        df = spark.read.parquet(data)
        before, start = stat(), time.perf_counter()
        run(df)
        wall = time.perf_counter() - start
        return wall, tuple(b - a for a, b in zip(before, stat(), strict=True))

    for _ in range(2):
        for run in systems.values():
            once(run)
    wall: dict[str, list[float]] = {k: [] for k in systems}
    cpus: dict[str, list[float]] = {k: [] for k in systems}
    rest: dict[str, list[tuple[float, ...]]] = {k: [] for k in systems}
    for _ in range(args.repeat):
        for name, run in systems.items():
            w, c = once(run)
            wall[name].append(w)
            cpus[name].append(c[0])
            rest[name].append(c[1:])
    print(
        f"{args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}"
        f" (load {os.getloadavg()[0]:.1f}); ratios to floor (a):"
    )
    fw = wall.get("floor (a)") or [float("nan")]
    fc = cpus.get("floor (a)") or [float("nan")]
    for name in systems:
        w, c = wall[name], cpus[name]
        print(
            f"  {name:10s} wall {min(w):5.2f} {statistics.median(w):5.2f} s"
            f" ({min(w) / min(fw):4.2f}x, {statistics.median(w) / statistics.median(fw):4.2f}x)"
            f"  CPU {min(c):5.2f} {statistics.median(c):5.2f} s"
            f" ({min(c) / min(fc):4.2f}x, {statistics.median(c) / statistics.median(fc):4.2f}x)"
        )
    print("medians of a run: system CPU s, page faults, young collections")
    for name in systems:
        system, faults, gcs = (statistics.median(x) for x in zip(*rest[name], strict=True))
        print(f"  {name:10s} {system:5.2f} s  {faults:9,.0f}  {gcs:4.1f}")


if __name__ == "__main__":
    main()
