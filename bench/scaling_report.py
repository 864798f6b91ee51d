"""The section "Scaling: 1M to 100M rows" of BENCHMARKS.md from bench/scaling.py's results:
each rule set's time beside floor (a) per size, the ratio's trend, the driver's peak memory.

Pure Python, no Spark: bench/report.py keeps the section when it rewrites the file, and
tests/unit/test_bench_scaling.py checks the arithmetic.
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

HEADING = "## Scaling: 1M to 100M rows"
# A step up in the ratio within this fraction is noise on a shared 2-core machine (min of 2-3)
TOLERANCE = 0.10


def best(case: dict[str, Any], system: str) -> float | None:
    t = case["times"].get(system)
    return min(t) if t else None


def median(case: dict[str, Any], system: str) -> float | None:
    t = case["times"].get(system)
    return statistics.median(t) if t else None


def ratio(case: dict[str, Any]) -> float | None:
    """lineage-quality's min over floor (a)'s min."""
    ours, floor = best(case, "ours"), best(case, "floor_a")
    return None if ours is None or not floor else ours / floor


def cpu_ratio(case: dict[str, Any]) -> float | None:
    """The same of the CPU seconds each system's worker and JVM spent in a timed run (bench/run.py
    keeps them): less moved than wall time by whatever else the machine runs meanwhile."""
    spent = {s: min(r["own"] for r in runs) for s, runs in case.get("cpu", {}).items() if runs}
    ours, floor = spent.get("ours"), spent.get("floor_a")
    return None if ours is None or not floor else ours / floor


def trend(ratios: list[tuple[int, float]], tolerance: float = TOLERANCE) -> tuple[bool, str]:
    """Whether the ratio to the floor stays flat or falls as the rows grow (no step from one
    size to the next up by more than `tolerance`), and where it grows if it does."""
    steps = sorted(ratios)
    grows = [
        f"{_rows(a)} -> {_rows(b)}: {x:.2f}x -> {y:.2f}x"
        for (a, x), (b, y) in itertools.pairwise(steps)
        if y > x * (1 + tolerance)
    ]
    if grows:
        return False, "grows " + "; ".join(grows)
    first, last = steps[0][1], steps[-1][1]
    word = "falls" if last < first * (1 - tolerance) else "flat"
    return True, f"{word} ({first:.2f}x -> {last:.2f}x)"


def _rows(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n:,}"


def _mib(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.0f}"


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def table(results: list[dict[str, Any]]) -> list[str]:
    """One row per (rule set, size): times, ratio, the drivers' peak memory."""
    lines = [
        "| rule set | rows | floor (a) min s | lineage-quality min s | ratio | median s "
        "(floor / ours) | runs | JVM peak RSS MiB (floor / ours) | JVM heap peak MiB "
        "(floor / ours) | Python peak RSS MiB (ours) | CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in sorted(results, key=lambda c: (c["rules"], c["rows"])):
        memory = c.get("memory", {})
        floor, ours = memory.get("floor_a", {}), memory.get("ours", {})
        r, cpu = ratio(c), cpu_ratio(c)
        runs = len(c["times"].get("ours") or [])
        lines.append(
            f"| {c['rules']} | {c['rows']:,} | {_s(best(c, 'floor_a'))} | {_s(best(c, 'ours'))} "
            f"| {'n/a' if r is None else f'{r:.2f}x'} "
            f"| {_s(median(c, 'floor_a'))} / {_s(median(c, 'ours'))} | {runs} "
            f"| {_mib(floor.get('jvm_rss_peak'))} / {_mib(ours.get('jvm_rss_peak'))} "
            f"| {_mib(floor.get('jvm_heap_peak'))} / {_mib(ours.get('jvm_heap_peak'))} "
            f"| {_mib(ours.get('python_rss_peak'))} | {'n/a' if cpu is None else f'{cpu:.2f}x'} |"
        )
    return lines


def goals(results: list[dict[str, Any]]) -> list[str]:
    """Issue 52's goals on this curve: each rule set's ratio flat or falling with size; R10
    and R30 at or below the floor at every size."""
    out = []
    for rules in sorted({c["rules"] for c in results}):
        cases = [c for c in results if c["rules"] == rules]
        ratios = [(c["rows"], r) for c in cases if (r := ratio(c)) is not None]
        if len(ratios) < 2:
            out.append(f"- {rules}: ratio to floor (a) with size: **not measured**")
            continue
        ok, text = trend(ratios)
        cpus = [(c["rows"], r) for c in cases if (r := cpu_ratio(c)) is not None]
        cpu = f" (CPU ratio {trend(cpus)[1]})" if len(cpus) == len(ratios) else ""
        out.append(f"- {rules}: ratio to floor (a) {text}{cpu}: **{'holds' if ok else 'MISSED'}**")
        if rules in ("R10", "R30"):
            over = [f"{_rows(n)} {r:.2f}x" for n, r in sorted(ratios) if r > 1.0]
            word = "MISSED: " + ", ".join(over) if over else "holds"
            out.append(f"- {rules} at or below floor (a) at every size: **{word}**")
    return out


def errors(results: list[dict[str, Any]]) -> list[str]:
    out = []
    for c in results:
        for system, error in c.get("errors", {}).items():
            out.append(f"- {c['rules']}, {c['rows']:,} rows, {system}: {error[:200]}")
        for d in c.get("disagreements", []):
            out.append(f"- {c['rules']}, {c['rows']:,} rows: {d}")
    return out


def section(doc: dict[str, Any]) -> list[str]:
    """The whole section, heading first."""
    generated = [
        f"{_rows(g['rows'])} rows ({g['bytes'] / 1e9:.2f} GB of Parquet): generated in "
        f"{g['seconds']:.0f} s (Spark {g['spark']})"
        if g.get("seconds") is not None
        else f"{_rows(g['rows'])} rows ({g['bytes'] / 1e9:.2f} GB of Parquet): generated earlier"
        for g in doc["data"]
    ]
    repeats = ", ".join(f"{_rows(int(n))}: {r}" for n, r in doc["repeats"].items())
    lines = [
        HEADING,
        "",
        f"Written by `{doc['command']}` on {doc['when']} UTC (Spark {doc['spark']}, "
        f"{doc['seconds'] / 60:.0f} min in all). lineage-quality and floor (a) (one bare "
        "aggregation of the columns the rules read) in a worker JVM each, the settings of the "
        f"rest of this file; {doc['warm_up']} untimed rounds of every rule set on 1M rows first, "
        "then per case one warm-up run each and the timed runs interleaved with the floor "
        f"(runs per size: {repeats}). Ratio: the minima of wall time; CPU ratio: the minima of "
        "the CPU seconds of each system's worker and JVM in a timed run. The data is "
        "bench/data.py's, seeded, generated once under the bench's data folder (not kept in "
        "git) and reused: " + "; ".join(generated) + ".",
        "",
        "Driver memory per case (its warm-up and timed runs), each worker's own driver: JVM peak "
        "RSS is the JVM process's VmHWM (/proc/<pid>/status), reset before the case "
        "(/proc/<pid>/clear_refs); JVM heap peak is the sum of the heap pools' peak usage "
        "(MemoryPoolMXBean, reset before the case; the pools peak at different moments, so an "
        "upper bound); Python peak RSS is the worker's Python process's VmHWM. Every JVM has a "
        "3 GiB heap limit (`spark.driver.memory`), so G1 may fill its young generation up to it "
        "whatever the work: compare with the floor's.",
        "",
        *table(doc["results"]),
        "",
        *goals(doc["results"]),
        "",
    ]
    if not all(m.get("reset_ok", True) for m in doc.get("resets", [])):
        lines += ["The kernel refused a reset of the high-water marks: RSS peaks are since "
                  "the workers started.", ""]  # fmt: skip
    problems = errors(doc["results"])
    if problems:
        lines += ["Errors and disagreements:", "", *problems, ""]
    return lines


def _span(text: str) -> tuple[int, int] | None:
    """Where the scaling section of a markdown file starts and ends (the next `## ` heading)."""
    start = text.find(HEADING + "\n")
    if start < 0:
        return None
    end = text.find("\n## ", start + len(HEADING))
    return start, len(text) if end < 0 else end + 1


def put_section(text: str, lines: list[str], before: str = "## The producer") -> str:
    """`text` (a markdown file) with its scaling section replaced by `lines`, or, where it has
    none, inserted before the heading `before` (at the end where there is no such heading)."""
    body = "\n".join(lines).rstrip("\n") + "\n\n"
    span = _span(text)
    if span is not None:
        return text[: span[0]] + body + text[span[1] :]
    at = text.find("\n" + before + "\n")
    if at < 0:
        return text.rstrip("\n") + "\n\n" + body if text.strip() else body
    return text[: at + 1] + body + text[at + 1 :]


def kept_section(text: str) -> list[str]:
    """The scaling section of a markdown file, heading first; [] where it has none."""
    span = _span(text)
    return [] if span is None else [*text[span[0] : span[1]].rstrip("\n").split("\n"), ""]
