"""What the opt-in profile (docs/metrics.md) adds to the fused scan, on the bench's seeded data.

    .venv/bin/python bench/profile_cost.py [--rows 1000000] [--rules R10] [--repeat 15]

Runs `evaluate_dataframe` with the profile off and on, interleaved (the order alternates each
round) after two warm-ups of each, and prints the median and minimum wall time and the executors'
CPU time of each (the CPU time is the steadier figure on a host shared with other Spark work).
The data is generated once under bench/data, as `make bench` does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))

from data import ensure  # noqa: E402
from ours import to_rule  # noqa: E402
from rulesets import ruleset  # noqa: E402

from lineage_quality.engine.run import evaluate_dataframe  # noqa: E402
from lineage_quality.evaluation.session import evaluator_session  # noqa: E402


def executor_cpu_seconds(spark: Any) -> float:
    """Executor CPU time of every stage so far (the status store keeps them all)."""
    sc = spark.sparkContext
    jvm = sc._jvm
    empty = jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(jvm.double, 0)
    stages = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
    return sum(stages.apply(i).executorCpuTime() for i in range(stages.size())) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rules", default="R10")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    spark = evaluator_session("local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.parquet(str(ensure(spark, args.rows, HERE / "data")))
    rules = [to_rule(r) for r in ruleset(args.rules)]

    def timed(profile: bool) -> tuple[float, float]:
        cpu = executor_cpu_seconds(spark)
        start = time.perf_counter()
        evaluate_dataframe(df, rules, profile=profile)
        return time.perf_counter() - start, executor_cpu_seconds(spark) - cpu

    for profile in (False, True, False, True):
        timed(profile)
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for i in range(args.repeat):
        for profile in (False, True) if i % 2 else (True, False):
            w, c = timed(profile)
            wall[profile].append(w)
            cpu[profile].append(c)
    print(f"{args.rules} on {args.rows:,} rows, {args.repeat} runs each")
    for profile in (False, True):
        w, c = wall[profile], cpu[profile]
        print(
            f"profile {'on ' if profile else 'off'}: wall median {statistics.median(w):.3f} s "
            f"(min {min(w):.3f}), executors' CPU median {statistics.median(c):.3f} s "
            f"(min {min(c):.3f})"
        )
    spark.stop()


if __name__ == "__main__":
    main()
