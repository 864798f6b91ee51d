"""Where lineage-quality's wall time goes: the engine's driver-side steps and the Spark jobs.

    .venv/bin/python bench/profile_phases.py [--rows 1000000] [--rules F10,F100] [--repeat 5]

One process, the bench's Spark settings and the engine's jar; each rule set is run 3 times to
warm up, then `--repeat` times, and the mean seconds per run of each wrapped engine step are
printed with the wall time and the time the Spark jobs took (submission to completion).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import ours  # noqa: E402
from rulesets import ruleset  # noqa: E402
from settings import session  # noqa: E402

import lineage_quality.engine.key_sets as key_sets  # noqa: E402
import lineage_quality.engine.run as engine_run  # noqa: E402

spent: dict[str, float] = collections.defaultdict(float)


def wrap(name: str, module: Any = engine_run) -> None:
    inner = getattr(module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    setattr(module, name, timed)


def jobs_seconds(spark: Any) -> float:
    """Submission to completion of every Spark job so far (the status store keeps them)."""
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    total = 0.0
    for i in range(jobs.size()):
        job = jobs.apply(i)
        start, end = job.submissionTime(), job.completionTime()
        if start.isDefined() and end.isDefined():
            total += (end.get().getTime() - start.get().getTime()) / 1000
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rules", default="F10,F100")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name in (
        "build_plan", "footer_counts", "dictionary_counts", "share", "gated_counts", "agg",
        "_aggregate", "key_set_counts",
    ):  # fmt: skip
        wrap(name)
    # beside the fused scan the key sets are counted on a thread of their own, which calls the
    # key_sets module's function: its seconds then overlap the scan's
    wrap("key_set_counts", key_sets)
    spark = session(ours.conf())
    data = str(HERE / "data" / f"orders_{args.rows}")
    for rules in args.rules.split(","):
        for _ in range(3):
            ours.run(spark, spark.read.parquet(data), ruleset(rules))
    for rules in args.rules.split(","):
        spent.clear()
        walls, jobs = [], 0.0
        for _ in range(args.repeat):
            df = spark.read.parquet(data)
            before, start = jobs_seconds(spark), time.perf_counter()
            ours.run(spark, df, ruleset(rules))
            walls.append(time.perf_counter() - start)
            jobs += jobs_seconds(spark) - before
        print(
            f"{rules} {args.rows:,} rows, Spark {spark.version}: wall median "
            f"{statistics.median(walls):.3f} s, min {min(walls):.3f} s; Spark jobs "
            f"{jobs / args.repeat:.3f} s a run"
        )
        for name, seconds in spent.items():
            print(f"   {name:16s} {seconds / args.repeat:.3f} s a run")
    spark.stop()


if __name__ == "__main__":
    main()
