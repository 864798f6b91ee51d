"""What the key-set pass's partition count costs: RU's two uniqueness rules ("U") and RU with the
pass sized from its rows (engine/uniqueness.py `sized`) against the pass sized by the session's
`spark.sql.shuffle.partitions` alone, as before, beside floor (a).

    .venv/bin/python bench/profile_key_partitions.py [--rows 1000000] [--repeat 10]
        [--shuffle-partitions 200]

One process, the bench's Spark settings except `spark.sql.shuffle.partitions` (200 is Spark's
default, what a user's session has when the producer attaches to it); the engine's jar. The two
sizings alternate in the same process after two untimed rounds; min and median wall seconds.
"""

from __future__ import annotations

import argparse
import math
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

from lineage_quality.engine import uniqueness  # noqa: E402

SIZED = uniqueness.sized


def by_setting(rows: int | None, configured: int, cores: int) -> int:
    """The sizing before: the setting, raised only by the partition bound."""
    bound = math.ceil((rows or 0) / uniqueness.ROWS_PER_PARTITION)
    return max(configured, bound, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--shuffle-partitions", default="200")
    parser.add_argument("--data", default=str(HERE / "data"))
    args = parser.parse_args()
    spark = session(ours.conf() | {"spark.sql.shuffle.partitions": args.shuffle_partitions})
    ru = ruleset("RU")
    unique = [r for r in ru if r["kind"] == "unique"]

    def sized_as(fn: Callable[..., int], rules: list[Any]) -> Callable[[Any], Any]:
        def run(df: Any) -> Any:
            uniqueness.sized = fn  # type: ignore[assignment]
            try:
                return ours.run(spark, df, rules)
            finally:
                uniqueness.sized = SIZED  # type: ignore[assignment]

        return run

    systems: dict[str, Callable[[Any], Any]] = {
        "floor (a)": lambda df: floor_a.run(spark, df, ru),
        "U by setting": sized_as(by_setting, unique),
        "U by rows": sized_as(SIZED, unique),
        "RU by setting": sized_as(by_setting, ru),
        "RU by rows": sized_as(SIZED, ru),
    }
    wall = interleaved(spark, str(Path(args.data) / f"orders_{args.rows}"), systems, args.repeat)
    floor = wall["floor (a)"]
    print(
        f"{args.rows:,} rows, Spark {spark.version}, spark.sql.shuffle.partitions"
        f" {args.shuffle_partitions}, {spark.sparkContext.defaultParallelism} cores;"
        f" min / median of {args.repeat}, ratios to floor (a)"
    )
    for name, w in wall.items():
        low, mid = min(w), statistics.median(w)
        print(
            f"  {name:14s} {low:5.2f} {mid:5.2f} s"
            f"  ({low / min(floor):4.2f}x, {mid / statistics.median(floor):4.2f}x)"
        )


if __name__ == "__main__":
    main()
