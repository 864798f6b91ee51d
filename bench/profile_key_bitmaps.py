"""RU with integer keys as bitmaps and as values, hashed off the scan's columns and off rows,
beside floor (a), in one process.

    .venv/bin/python bench/profile_key_bitmaps.py [--rows 10000000] [--repeat 4]

The bench's Spark settings and the engine's jar; 2 warm-up rounds, then `--repeat` interleaved
rounds of floor (a) (a bare count of RU's columns), lineage-quality, lineage-quality with
`LINEAGE_QUALITY_KEY_BITMAPS=0` and with `LINEAGE_QUALITY_KEY_COLUMNS=0`; min and median wall
seconds of each, and the shuffle bytes its last run wrote.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import ours  # noqa: E402
from rulesets import columns_of, ruleset  # noqa: E402
from settings import interleaved, session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    spark = session(ours.conf())
    sc = spark.sparkContext
    data = str(HERE / "data" / f"orders_{args.rows}")
    rules = ruleset("RU")
    empty = sc._jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(sc._jvm.double, 0)

    def stages() -> dict[int, int]:
        found = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
        return {
            int(found.apply(i).stageId()): int(found.apply(i).shuffleWriteBytes())
            for i in range(found.size())
        }

    def ours_with(**flags: str) -> Callable[[Any], None]:
        def run(df: Any) -> None:
            os.environ.update({f"LINEAGE_QUALITY_{k.upper()}": v for k, v in flags.items()})
            try:
                ours.run(spark, df, rules)
            finally:
                for k in flags:
                    os.environ.pop(f"LINEAGE_QUALITY_{k.upper()}", None)

        return run

    systems: dict[str, Callable[[Any], Any]] = {
        "floor (a)": lambda df: df.agg(*[F.count(c) for c in columns_of(rules)]).collect(),
        "lineage-quality": ours_with(),
        "integer keys as values": ours_with(key_bitmaps="0"),
        "keys hashed off rows": ours_with(key_columns="0"),
    }

    shuffled: dict[str, int] = {}
    seen = set(stages())

    def record(name: str) -> None:
        now = stages()
        shuffled[name] = sum(b for s, b in now.items() if s not in seen)
        seen.update(now)

    times = interleaved(spark, data, systems, args.repeat, record)
    print(f"RU, {args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}:")
    floor = min(times["floor (a)"])
    for name, walls in times.items():
        print(
            f"  {name:24s} {min(walls):.2f} s  {statistics.median(walls):.2f} s  "
            f"{min(walls) / floor:.2f}x floor (a)  shuffle written {shuffled[name] / 1e6:.1f} MB"
        )
    spark.stop()


if __name__ == "__main__":
    main()
