"""The key-set pass's reduce side alone: `HashCounts.of` (jvm-config/src/lineagequality) on one
partition's hashes, in the JVM, nothing else timed.

    .venv/bin/python bench/profile_hash_counts.py [--hashes 625000] [--repeat 40]

One SparkSession with the engine's jar (for its classes only: no job runs). The hashes are made in
the JVM (java.util.Random, seeded): one key set's (its top 4 bits 0), 60 random bits each, so
nearly all distinct, as a unique key's are. 625,000 is one of 16 partitions of 10M rows (RU's
pair key set). Prints the min and the median ms of a call (the first quarter of the calls
untimed, for the JIT).
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
sys.path.insert(0, str(HERE.parent / "python"))

import ours  # noqa: E402
from settings import session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hashes", type=int, default=625_000)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    spark = session(ours.conf())
    jvm = spark._jvm
    keys = jvm.java.util.Random(7).longs(args.hashes, 0, 1 << 60).toArray()
    counts = jvm.lineagequality.HashCounts
    bits, listed, limit = 4, 1, 100_000
    found = counts.of(keys, bits, listed, limit)
    assert found[0] == args.hashes, "every hash counted as a row of key set 0"
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        counts.of(keys, bits, listed, limit)
        times.append((time.perf_counter() - start) * 1000)
    timed = times[args.repeat // 4 :]
    print(
        f"HashCounts.of, {args.hashes:,} hashes ({found[1 << bits]:,} distinct), Spark "
        f"{spark.version}: min {min(timed):.2f} ms, median {statistics.median(timed):.2f} ms"
    )


if __name__ == "__main__":
    main()
