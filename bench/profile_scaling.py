"""Where 10 -> 100 fusable rules (F10 -> F100) spend their time, in one process.

    .venv/bin/python bench/profile_scaling.py [--rows 10000000] [--repeat 5]

F10 and F100 for floor (a) and lineage-quality, with the footers' integer bounds on and off
(`LINEAGE_QUALITY_FOOTER_BOUNDS=0`), then F100 without each kind of rule, so the difference to
F100 is what that kind costs. The bench's Spark settings and the engine's jar, 2 warm-up rounds,
then `--repeat` interleaved rounds; min and median wall seconds of each.
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
from rulesets import Rule, columns_of, ruleset  # noqa: E402
from settings import interleaved, session  # noqa: E402


def _without(rules: list[Rule], kind: str) -> list[Rule]:
    return [r for r in rules if r["kind"] != kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    spark = session(ours.conf())
    data = str(HERE / "data" / f"orders_{args.rows}")
    f10, f100 = ruleset("F10"), ruleset("F100")

    def floor_a(rules: list[Rule]) -> Callable[[Any], Any]:
        return lambda df: df.agg(*[F.count(c) for c in columns_of(rules)]).collect()

    def ours_on(rules: list[Rule], bounds: bool = True) -> Callable[[Any], Any]:
        def run(df: Any) -> None:
            if not bounds:
                os.environ["LINEAGE_QUALITY_FOOTER_BOUNDS"] = "0"
            try:
                ours.run(spark, df, rules)
            finally:
                os.environ.pop("LINEAGE_QUALITY_FOOTER_BOUNDS", None)

        return run

    systems: dict[str, Callable[[Any], Any]] = {
        "floor (a) F10": floor_a(f10),
        "floor (a) F100": floor_a(f100),
        "lineage-quality F10": ours_on(f10),
        "lineage-quality F100": ours_on(f100),
        "no footer bounds F10": ours_on(f10, bounds=False),
        "no footer bounds F100": ours_on(f100, bounds=False),
    }
    for kind in ("pattern", "stat", "range", "accepted", "not_null"):
        systems[f"F100 without {kind} rules"] = ours_on(_without(f100, kind))

    times = interleaved(spark, data, systems, args.repeat)
    print(f"{args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}:")
    for name, walls in times.items():
        print(f"  {name:30s} {min(walls):.2f} s  {statistics.median(walls):.2f} s")
    for name in ("floor (a)", "lineage-quality", "no footer bounds"):
        ratio = min(times[f"{name} F100"]) / min(times[f"{name} F10"])
        print(f"  {name}: F100 / F10 = {ratio:.2f}x (minima)")
    spark.stop()


if __name__ == "__main__":
    main()
