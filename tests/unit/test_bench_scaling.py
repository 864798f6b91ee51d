"""bench/scaling_report.py: the scaling curve's verdicts and its section of BENCHMARKS.md (pure
Python; the measurement itself is `make bench-scaling`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import scaling_report  # noqa: E402
from scaling_report import HEADING, goals, kept_section, put_section, trend  # noqa: E402


def case(rules: str, rows: int, floor: list[float], ours: list[float]) -> dict[str, Any]:
    return {"rules": rules, "rows": rows, "times": {"floor_a": floor, "ours": ours}}


def test_a_ratio_flat_within_noise_or_falling_holds() -> None:
    assert trend([(10_000_000, 0.74), (1_000_000, 0.80), (100_000_000, 0.78)]) == (
        True,
        "flat (0.80x -> 0.78x)",
    )
    assert trend([(1_000_000, 2.0), (10_000_000, 1.6), (100_000_000, 1.5)])[0]
    assert "falls" in trend([(1_000_000, 2.0), (10_000_000, 1.6), (100_000_000, 1.5)])[1]


def test_a_ratio_that_steps_up_is_named_where_it_grows() -> None:
    ok, text = trend([(1_000_000, 1.5), (10_000_000, 1.55), (100_000_000, 1.9)])
    assert not ok
    assert text == "grows 10M -> 100M: 1.55x -> 1.90x"


def test_goals_take_the_minima_and_name_the_sizes_over_the_floor() -> None:
    results = [
        case("R30", 1_000_000, [1.0, 0.9], [1.0, 0.95]),  # 0.95 / 0.9 = 1.06x
        case("R30", 10_000_000, [2.0, 2.2], [1.5, 1.7]),  # 0.75x
        case("RU", 1_000_000, [1.0], [2.0]),
        case("RU", 10_000_000, [2.0], [5.0]),  # 2.0x -> 2.5x
    ]
    assert goals(results) == [
        "- R30: ratio to floor (a) falls (1.06x -> 0.75x): **holds**",
        "- R30 at or below floor (a) at every size: **MISSED: 1M 1.06x**",
        "- RU: ratio to floor (a) grows 1M -> 10M: 2.00x -> 2.50x: **MISSED**",
    ]


def test_the_section_replaces_its_old_self_and_nothing_else() -> None:
    text = "# Benchmarks\n\n## Side by side\n\nx\n\n## The producer\n\np\n"
    first = put_section(text, [HEADING, "", "old", ""])
    assert first == (
        "# Benchmarks\n\n## Side by side\n\nx\n\n" + HEADING + "\n\nold\n\n## The producer\n\np\n"
    )
    second = put_section(first, [HEADING, "", "new"])
    assert second == first.replace("old", "new")
    assert kept_section(second) == [HEADING, "", "new", ""]
    # at the end of a file without the producer's heading; nothing kept from a file without it
    assert put_section("# B\n", [HEADING, "", "n"]) == "# B\n\n" + HEADING + "\n\nn\n\n"
    assert kept_section(text) == []


def test_a_case_without_a_time_has_no_ratio() -> None:
    assert scaling_report.ratio({"times": {"floor_a": [1.0]}}) is None
    assert goals([case("RU", 1_000_000, [1.0], [])]) == [
        "- RU: ratio to floor (a) with size: **not measured**"
    ]


def test_the_cpu_ratio_takes_each_systems_least_cpu_and_shows_beside_the_wall_trend() -> None:
    def timed(rows: int, floor_cpu: list[float], ours_cpu: list[float]) -> dict[str, Any]:
        found = case("RU", rows, [1.0], [1.5])
        found["cpu"] = {
            "floor_a": [{"own": c, "others": 0.0} for c in floor_cpu],
            "ours": [{"own": c, "others": 0.0} for c in ours_cpu],
        }
        return found

    small, large = timed(1_000_000, [2.0, 1.6], [3.0, 4.0]), timed(10_000_000, [4.0], [4.0])
    assert scaling_report.cpu_ratio(small) == 3.0 / 1.6
    assert scaling_report.cpu_ratio(case("RU", 1, [1.0], [1.0])) is None
    assert goals([small, large]) == [
        "- RU: ratio to floor (a) flat (1.50x -> 1.50x) (CPU ratio falls (1.88x -> 1.00x)): "
        "**holds**"
    ]
