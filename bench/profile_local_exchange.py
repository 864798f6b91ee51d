"""RU with the key-set pass's chunks exchanged in memory, through files and shuffled, beside
floor (a).

    .venv/bin/python bench/profile_local_exchange.py [--rows 10000000] [--repeat 5]

One process, the bench's Spark settings and the engine's jar: floor (a), lineage-quality as it
runs (local mode: the chunks exchanged in memory, JVM helper `LocalExchange`, or past its bound
through files, `ChunkFiles`), lineage-quality with `LINEAGE_QUALITY_LOCAL_EXCHANGE=files` (files
whatever the size) and with `=0` (a shuffle, as on a cluster), interleaved after two untimed
rounds; min and median wall seconds, the minima's ratio to floor (a), and the JVM's count of
exchanges (in memory, declined, given up, bytes held, through files, bytes written to files).
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

import floor_a  # noqa: E402
import ours  # noqa: E402
from rulesets import ruleset  # noqa: E402
from settings import interleaved, session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rules = ruleset("RU")
    spark = session(ours.conf())

    def ours_with(exchange: str) -> Callable[[Any], Any]:
        def run(df: Any) -> Any:
            os.environ["LINEAGE_QUALITY_LOCAL_EXCHANGE"] = exchange  # read at each pass
            return ours.run(spark, df, rules)

        return run

    times = interleaved(
        spark,
        str(HERE / "data" / f"orders_{args.rows}"),
        {
            "floor (a)": lambda df: floor_a.run(spark, df, rules),
            "ours": ours_with("1"),
            "ours, files": ours_with("files"),
            "ours, shuffled": ours_with("0"),
        },
        args.repeat,
    )
    floor = min(times["floor (a)"])
    print(f"RU, {args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}:")
    for name, runs in times.items():
        print(
            f"  {name:18s} {min(runs):6.2f} s {statistics.median(runs):6.2f} s"
            f"  {min(runs) / floor:5.2f}x"
        )
    counts = list(spark._jvm.lineagequality.KeyHashes.localExchanges())
    print(
        "  exchanges (in memory, declined, given up, bytes held, through files, bytes written):",
        counts,
    )


if __name__ == "__main__":
    main()
