"""What failing-row samples (docs/rules.md, "Failing-row samples") add to an evaluation, on the
bench's seeded data: rule set S1, one pattern rule failing on 1 % of rows.

    .venv/bin/python bench/sample_cost.py [--rows 10000000] [--rules S1] [--repeat 7]
                                          [--data bench/data]

Runs `evaluate_dataframe` without samples and with them (5 rows, the key `order_id`, the
`email` column masked), interleaved (the order alternates each round) after two warm-ups of
each, and prints the median and minimum wall time and the executors' CPU time of each, and the
added share. The data is generated once under --data, as `make bench` does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))

from data import ensure  # noqa: E402
from ours import to_rule  # noqa: E402
from profile_cost import executor_cpu_seconds  # noqa: E402
from rulesets import ruleset  # noqa: E402

from lineage_quality.engine.run import evaluate_dataframe  # noqa: E402
from lineage_quality.evaluation.session import evaluator_session  # noqa: E402
from lineage_quality.results import Status  # noqa: E402
from lineage_quality.samples import Masking, SamplePolicy, Sampling  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rules", default="S1")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args()
    spark = evaluator_session("local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.parquet(str(ensure(spark, args.rows, args.data)))
    rules = [to_rule(r) for r in ruleset(args.rules)]
    policy = SamplePolicy(keys=("order_id",), masks=(("email", Masking.HASH),))
    sampling = Sampling(policy)

    def timed(sampled: bool) -> tuple[float, float]:
        cpu = executor_cpu_seconds(spark)
        start = time.perf_counter()
        results = evaluate_dataframe(df, rules, sampling=sampling if sampled else None)
        wall = time.perf_counter() - start
        failed = [r for r in results if r.status is Status.FAILED]
        assert failed, "the rule set must fail for samples to be taken"
        if sampled:  # the rules that judge rows (not a statistic) come with their rows
            assert any(r.samples is not None and r.samples.rows for r in failed)
        return wall, executor_cpu_seconds(spark) - cpu

    for sampled in (False, True, False, True):
        timed(sampled)
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for i in range(args.repeat):
        for sampled in (False, True) if i % 2 else (True, False):
            w, c = timed(sampled)
            wall[sampled].append(w)
            cpu[sampled].append(c)
    print(f"{args.rules} on {args.rows:,} rows, {args.repeat} runs each")
    for sampled in (False, True):
        w, c = wall[sampled], cpu[sampled]
        print(
            f"samples {'on ' if sampled else 'off'}: wall median {statistics.median(w):.3f} s "
            f"(min {min(w):.3f}), executors' CPU median {statistics.median(c):.3f} s "
            f"(min {min(c):.3f})"
        )
    off, on = statistics.median(wall[False]), statistics.median(wall[True])
    print(f"samples add {100 * (on - off) / off:+.1f} % wall time (medians)")
    spark.stop()


if __name__ == "__main__":
    main()
