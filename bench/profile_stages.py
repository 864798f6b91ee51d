"""Which Spark stage of a rule set's evaluation grows with the rows: lineage-quality beside floor
(a), stage by stage, at several sizes, in one process.

    .venv/bin/python bench/profile_stages.py [--rules RU] [--sizes 10000000,100000000]
                                             [--repeat 2]

The bench's Spark settings and the engine's jar; per size one untimed run of each, then
`--repeat` interleaved runs. Each run prints its wall seconds and, per Spark stage it ran (from
the status store): the stage's span, its tasks' run and CPU seconds, GC seconds, the bytes read
from the files and the shuffle bytes written and read. The key-set pass is the stage named
`mapPartitionsToPair` (hashing and shuffle writing) and the `collect` after it; the fused scan
is `first`. The data sets are bench/scaling.py's (bench/data/orders_<rows>).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import ours  # noqa: E402
from rulesets import columns_of, ruleset  # noqa: E402
from settings import session  # noqa: E402


def stages(spark: Any) -> dict[tuple[int, int], str]:
    """Every stage the status store holds, as one line of figures each."""
    sc = spark.sparkContext
    empty = sc._jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(sc._jvm.double, 0)
    found = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
    out = {}
    for i in range(found.size()):
        s = found.apply(i)
        span = "n/a"
        if s.submissionTime().isDefined() and s.completionTime().isDefined():
            ms = s.completionTime().get().getTime() - s.submissionTime().get().getTime()
            span = f"{ms / 1000:.2f}"
        out[(int(s.stageId()), int(s.attemptId()))] = (
            f"{s.name().split(' at ')[0][:22]:22s} span {span} s, tasks {s.numTasks()}: run "
            f"{s.executorRunTime() / 1000:.2f} s, CPU {s.executorCpuTime() / 1e9:.2f} s, GC "
            f"{s.jvmGcTime() / 1000:.2f} s; read {s.inputBytes() / 1e6:.0f} MB, shuffle written "
            f"{s.shuffleWriteBytes() / 1e6:.1f} MB, read {s.shuffleReadBytes() / 1e6:.1f} MB"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="RU")
    parser.add_argument("--sizes", default="10000000,100000000")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    spark = session(ours.conf())
    rules = ruleset(args.rules)
    systems = {
        "floor (a)": lambda df: df.agg(*[F.count(c) for c in columns_of(rules)]).collect(),
        "lineage-quality": lambda df: ours.run(spark, df, rules),
    }
    print(f"Spark {spark.version}, {args.rules}")
    for rows in (int(s) for s in args.sizes.split(",")):
        data = str(HERE / "data" / f"orders_{rows}")
        for run in systems.values():
            run(spark.read.parquet(data))
        for _ in range(args.repeat):
            for name, run in systems.items():
                seen, df = set(stages(spark)), spark.read.parquet(data)
                start = time.perf_counter()
                run(df)
                wall = time.perf_counter() - start
                print(f"{rows:,} rows, {name}: {wall:.2f} s", flush=True)
                # stages of one task (footers, the final merge) and skipped ones left out
                for key, line in sorted(stages(spark).items()):
                    if key not in seen and "tasks 1:" not in line and "span n/a" not in line:
                        print(f"  stage {key[0]:4d} {line}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
