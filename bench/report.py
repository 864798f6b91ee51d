"""BENCHMARKS.md from the harness's results (bench/results/latest.json)."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

from scaling_report import kept_section

PEERS = ("pydeequ", "soda", "soda_samples", "gx", "cuallee", "dqx")
LABELS = {
    "floor_a": "floor (a): one bare aggregation of the same columns",
    "floor_b": "floor (b): the same metrics as one hand-written aggregation",
    "floor_c": "floor (c): (a) + one `groupBy().count()` per key set",
    "ours": "**lineage-quality**",
    "ours_plain": "lineage-quality, JVM helpers off (the same expressions as floor (b))",
    "ours_base": "lineage-quality at LQ_BENCH_BASE (before)",
    "ours_history": "lineage-quality, history kept (one SQLite transaction per evaluation)",
    "pydeequ": "PyDeequ",
    "soda": "Soda Core (no failed-row samples)",
    "soda_samples": "Soda Core (failed-row samples, its default)",
    "gx": "Great Expectations (BOOLEAN_ONLY)",
    "cuallee": "cuallee",
    "dqx": "DQX",
}


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _x(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def _best(case: dict[str, Any], system: str) -> float | None:
    if "summary" in case:  # a case read back from a run's log: min and median only
        return case["summary"].get(system, [None])[0]
    t = case["times"].get(system)
    return min(t) if t else None


def _median(case: dict[str, Any], system: str) -> float | None:
    if "summary" in case:
        return case["summary"].get(system, [None, None])[1]
    t = sorted(case["times"].get(system) or [])
    if not t:
        return None
    mid = len(t) // 2
    return t[mid] if len(t) % 2 else (t[mid - 1] + t[mid]) / 2


def _case(doc: dict[str, Any], rows: int, rules: str) -> dict[str, Any] | None:
    return next((c for c in doc["cases"] if c["rows"] == rows and c["rules"] == rules), None)


def side_by_side(case: dict[str, Any]) -> list[str]:
    ours = _best(case, "ours")
    lines = [
        f"#### {case['rules']}, {case['rows']:,} rows",
        "",
        "| system | min s | median s | lineage-quality / system |",
        "|---|---:|---:|---:|",
    ]
    variants = ("ours", "ours_base", "ours_plain", "ours_history")
    for system in ("floor_a", "floor_b", "floor_c", *variants, *PEERS):
        if system in case["times"] or system in case.get("summary", {}):
            b = _best(case, system)
            median = _s(_median(case, system))
            if system in case.get("once", []):
                median = f"1 run: warm-up > {_s(case.get('budget'))} s budget"
            lines.append(f"| {LABELS[system]} | {_s(b)} | {median} | {_x(ours, b)} |")
        elif system in case["errors"]:
            lines.append(f"| {LABELS[system]} | error | | {case['errors'][system][:160]} |")
    lines.append("")
    if case.get("note"):
        lines += [case["note"], ""]
    if case.get("disagreements") is None:
        pass
    elif case.get("disagreements"):
        lines.append("Verdicts that differ from lineage-quality's, or that a system cannot state:")
        lines.append("")
        lines += [f"- {d}" for d in case["disagreements"]]
    else:
        lines.append("Every system that ran gave the same verdict on every rule.")
    lines.append("")
    return lines


def _beats_peers(case: dict[str, Any], name: str) -> tuple[bool | None, str]:
    o = _best(case, "ours")
    peers = {p: t for p in PEERS if (t := _best(case, p)) is not None}
    slower = [p for p, t in peers.items() if o is not None and t <= o]
    text = f"{name} faster than every peer ({len(peers)} ran)"
    if slower:
        text += f"; not faster than {', '.join(slower)}"
    return (None if o is None or not peers else not slower), text


def goals(doc: dict[str, Any], rows: int) -> list[str]:
    out = [f"Goals on {rows:,} rows (min times):", ""]
    r30, ru = _case(doc, rows, "R30"), _case(doc, rows, "RU")
    f10, f100 = _case(doc, rows, "F10"), _case(doc, rows, "F100")

    def line(ok: bool | None, text: str) -> None:
        mark = {True: "holds", False: "MISSED", None: "not measured"}[ok]
        out.append(f"- {text}: **{mark}**")

    if r30:
        o, a, b = _best(r30, "ours"), _best(r30, "floor_a"), _best(r30, "floor_b")
        ok = None if o is None or b is None else o <= 1.05 * b
        line(ok, f"R30 <= 1.05x floor (b): {_x(o, b)}")
        p = _best(r30, "ours_plain")
        ok = None if p is None or b is None else p <= 1.05 * b
        text = f"R30, JVM helpers off (floor (b)'s expressions) <= 1.05x floor (b): {_x(p, b)}"
        line(ok, text)
        line(None if o is None or a is None else o <= 1.1 * a, f"R30 <= 1.1x floor (a): {_x(o, a)}")
        line(*_beats_peers(r30, "R30"))
        h = _best(r30, "ours_history")
        ok = None if o is None or h is None else h <= 1.05 * o
        line(ok, f"R30 with its history kept <= 1.05x without: {_x(h, o)}")
    if ru:
        o, a, c = _best(ru, "ours"), _best(ru, "floor_a"), _best(ru, "floor_c")
        line(None if o is None or a is None else o <= 2 * a, f"RU <= 2x floor (a): {_x(o, a)}")
        line(None if o is None or c is None else o < c, f"RU faster than floor (c): {_x(o, c)}")
        line(*_beats_peers(ru, "RU"))
    if f10 and f100:
        a, b = _best(f10, "ours"), _best(f100, "ours")
        text = f"10 -> 100 rules: {_x(b, a)}"
        ra, rb = _best(f10, "floor_a"), _best(f100, "floor_a")
        if ra is not None and rb is not None:
            # F100 reads columns F10 does not (bench/profile_scaling.py: where its time goes)
            text += f" (the bare read of their columns alone: {_x(rb, ra)})"
        line(None if a is None or b is None else b <= 1.5 * a, text)
    out.append("")
    return out


def headline(doc: dict[str, Any]) -> list[str]:
    """One table: every system's min time per side-by-side case at the largest size, and the
    scaling series' F100 / F10."""
    rows = max((c["rows"] for c in doc["cases"]), default=0)
    cases = [c for n in ("R10", "R30", "RU") if (c := _case(doc, rows, n))]
    if not cases:
        return []
    head = " | ".join(f"{c['rules']} {rows / 1e6:g}M" for c in cases)
    lines = [
        f"Min of the timed runs, seconds, {rows:,} rows (ratio: lineage-quality / system):",
        "",
        f"| system | {head} |",
        "|---|" + "---:|" * len(cases),
    ]
    variants = ("ours", "ours_base", "ours_plain", "ours_history")
    for system in ("floor_a", "floor_b", "floor_c", *variants, *PEERS):
        cells = []
        for c in cases:
            t, ours = _best(c, system), _best(c, "ours")
            if t is not None:
                ratio = "" if system == "ours" else f" ({_x(ours, t)})"
                once = " (1 run)" if system in c.get("once", []) else ""
                cells.append(f"{_s(t)}{once}{ratio}")
            elif system in c["errors"]:
                cells.append("stopped" if "stopped after" in c["errors"][system] else "error")
            else:
                cells.append("")
        if any(cells):
            lines.append(f"| {LABELS[system]} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def write_report(doc: dict[str, Any], out: Path) -> None:
    m = doc["machine"]
    when = datetime.datetime.fromtimestamp(doc["started"], datetime.timezone.utc)
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`{doc['command']}`) on {when:%Y-%m-%d %H:%M} UTC, "
        f"{doc['seconds'] / 60:.0f} min in all. Re-run it to get this machine's numbers.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}; {m['os']}; Python {m['python']}; "
        f"{m['java']}. Every system: Spark `local[2]`, 16 shuffle partitions, 3 GiB driver, its "
        "own JVM, the same Parquet files (bench/data.py: seeded, 10 columns, 8 files). Before the "
        f"first case every system runs every rule set {doc.get('warm_up', 0)} times on 1,000,000 "
        "rows, untimed (the JIT's warm-up, alike for all whichever case comes first); each case "
        f"is then warmed up once per system and run {doc['repeat']} times with the systems "
        "interleaved; the time is the system's own call (planning, scans, collecting results). "
        "bench/results/latest.json keeps, per timed run, the CPU time of the system's worker and "
        "JVM, of the other workers meanwhile, and the CPU time the hypervisor stole.",
        "",
        *([doc["preamble"], ""] if doc.get("preamble") else []),
        "Versions:",
        "",
    ]
    lines += [f"- {LABELS.get(s, s)}: {v}" for s, v in doc["versions"].items()]
    for system, why in doc["missing"].items():
        lines.append(f"- {LABELS.get(system, system)}: **did not run**: {why}")
    lines += [
        "",
        "Rule sets (bench/rulesets.py): R10 = 10 rules (row count, not-null, accepted values, "
        "pattern, ranges, mean/max/stddev), 5 of them failing; R30 = R10 + 20 more of those "
        "kinds; RU = R10 + unique `order_id` + unique (`customer_id`, `created_at`); F10/F30/F100 "
        "= fusable rules of every kind but uniqueness.",
        "",
        "Floors (a) and (b) read every column the rules name; floor (b) is the same metrics "
        "hand-written as one aggregation in plain PySpark: pattern rules as `rlike`, value lists "
        "as `IN`, as a user would write them. This engine runs most patterns on a byte-level "
        "DFA, several patterns or value lists on one column as one per-row lookup, the counts of "
        "a column behind one gate per row, uniqueness on a shuffle of 64-bit key hashes checked "
        "exactly, takes the null counts of columns that only not-null rules read, and the "
        "ranges, mins and maxes of integer columns, from the Parquet footers, and tests value "
        "lists and patterns of dictionary-encoded string "
        "columns on the Parquet dictionaries, instead of reading those columns "
        "(docs/evaluation.md; same verdicts), so it can come in under floors (a), (b) and (c); "
        "it builds each step's expressions in one call to the JVM instead of one per function. "
        "The row 'JVM helpers off' is this engine with those eight turned off "
        "(`LINEAGE_QUALITY_PATTERN_DFA=0`, `LINEAGE_QUALITY_VALUE_CODES=0`, "
        "`LINEAGE_QUALITY_ROW_GATES=0`, `LINEAGE_QUALITY_KEY_HASHES=0`, "
        "`LINEAGE_QUALITY_FOOTER_NULLS=0`, `LINEAGE_QUALITY_FOOTER_BOUNDS=0`, "
        "`LINEAGE_QUALITY_DICTIONARY_VALUES=0`, "
        "`LINEAGE_QUALITY_COLUMN_PROGRAM=0`): the same expressions as floor (b), built call by "
        "call as PySpark builds them, so its ratio to floor (b) is the engine's own overhead.",
        "",
    ]
    sizes = sorted({c["rows"] for c in doc["cases"]})
    lines += ["## Headline", "", *headline(doc)]
    for rows in sizes:
        lines += goals(doc, rows)
    lines += ["## Side by side", ""]
    for case in doc["cases"]:
        if case["rules"] in ("R10", "R30", "RU"):
            lines += side_by_side(case)
    lines += [
        "## Scaling with the number of rules",
        "",
        "| rows | system | F10 s | F30 s | F100 s | F100 / F10 |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for rows in sizes:
        for system in ("floor_a", "floor_b", "ours", "ours_plain", "pydeequ"):
            found = [_case(doc, rows, f"F{n}") for n in (10, 30, 100)]
            t = [_best(c, system) if c else None for c in found]
            if any(v is not None for v in t):
                lines.append(
                    f"| {rows:,} | {LABELS[system]} | {_s(t[0])} | {_s(t[1])} | {_s(t[2])} | "
                    f"{_x(t[2], t[0])} |"
                )
    lines.append("")
    # bench/scaling.py's section comes from a sitting of its own (make bench runs it after this)
    lines += kept_section(out.read_text()) if out.exists() else []
    producer = doc.get("producer") or {}
    if producer:
        lines += producer.get("markdown", [])
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    default = Path(__file__).parent / "results" / "latest.json"
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    write_report(json.loads(source.read_text()), Path(__file__).parents[1] / "BENCHMARKS.md")
