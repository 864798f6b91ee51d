"""How `lineage-quality check` shows results: a table of the most fundamental failure per field,
or JSON with every atomic rule. Pure. The table's cells hold values read from the data (an
`actual`, a message quoting a value): they are printed inert, one line each, no escape sequence
reaching the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lineage_quality.inert import inert
from lineage_quality.results import RuleResult, Status


def status_of(result: RuleResult) -> str:
    # An error is a failure to the user (never a pass); its message says why.
    return "FAILED" if result.status is Status.ERROR else result.status.value


def result_json(result: RuleResult) -> dict[str, Any]:
    rule = result.rule
    found: dict[str, Any] = {
        "rule_id": rule.id,
        "name": rule.name or rule.id,
        "type": rule.constraint or rule.kind.value,
        "assertion": rule.assertion,
        "column": rule.column,
        "columns": list(rule.columns),
        "status": status_of(result),
        "skip_reason": result.skip_reason,
        "code": result.code or ("EVALUATION_ERROR" if result.status is Status.ERROR else None),
        "expected": result.expected,
        "actual": result.actual_text(),
        "failing_rows": result.failing_rows,
        "row_count": result.row_count,
        "message": result.message,
        "severity": rule.severity,
        "category": rule.category,
        "action": rule.effective_action.value,
        "source": rule.source,
        "description": rule.description,
        "tags": list(rule.tags),
        "scope": result.scope,  # the rows counted, when a filter condition limits them
    }
    if result.samples is not None:  # a few failing rows, masked (docs/rules.md)
        found["samples"] = result.samples.to_json()
    return found


def summary(results: Sequence[RuleResult]) -> dict[str, int]:
    counts = {"total": len(results), "passed": 0, "failed": 0, "skipped": 0}
    for r in results:
        counts[status_of(r).lower()] += 1
    return counts


def to_json(dataset: str, results: Sequence[RuleResult]) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "summary": summary(results),
        "results": [result_json(r) for r in results],
    }


def _field(result: RuleResult) -> str:
    return ", ".join(result.rule.columns) if result.rule.columns else "(dataset)"


def fundamental(results: Sequence[RuleResult]) -> list[tuple[str, RuleResult | None, int]]:
    """Per field: the most fundamental failure (or None when all passed) and its rule count."""
    fields: dict[str, list[RuleResult]] = {}
    for r in results:
        fields.setdefault(_field(r), []).append(r)
    rows: list[tuple[str, RuleResult | None, int]] = []
    for field, rs in fields.items():
        failed = [r for r in rs if r.status in (Status.FAILED, Status.ERROR)]
        failed.sort(key=lambda r: r.rule.kind.priority)  # seed 002: existence, completeness, values
        rows.append((field, failed[0] if failed else None, len(rs)))
    return rows


def _sample_lines(results: Sequence[RuleResult]) -> list[str]:
    """Below the table, each failed rule's samples: one row a line, inert."""
    out: list[str] = []
    for r in results:
        if r.samples is None or not (r.samples.rows or r.samples.error):
            continue
        if not out:
            out.append("")
        out.append(inert(f"failing rows of {r.rule.name or r.rule.id}:"))
        out.extend("  " + inert(line) for line in r.samples.lines())
    return out


def to_table(dataset: str, results: Sequence[RuleResult]) -> str:
    header = ("field", "status", "rule", "expected", "actual", "failing rows", "detail")
    lines: list[tuple[str, ...]] = [header]
    for field, failure, count in fundamental(results):
        if failure is None:
            mine = [r for r in results if _field(r) == field]
            if all(r.status is Status.SKIPPED for r in mine):  # e.g. `is_active: false`
                reason = mine[0].message or mine[0].skip_reason or ""
                lines.append((field, "SKIPPED", f"{count} rule(s)", "", "", "", reason))
            else:
                lines.append((field, "PASSED", f"{count} rule(s)", "", "", "", ""))
            continue
        skipped = sum(1 for r in results if _field(r) == field and r.status is Status.SKIPPED)
        detail = failure.code or ("error" if failure.status is Status.ERROR else "")
        if failure.message:
            detail = f"{detail}: {failure.message}" if detail else failure.message
        if skipped:
            detail += f" ({skipped} dependent rule(s) skipped)"
        lines.append(
            (
                field,
                "FAILED",
                failure.rule.name or failure.rule.id,
                failure.expected,
                failure.actual_text() or "",
                "" if failure.failing_rows is None else str(failure.failing_rows),
                detail,
            )
        )
    lines = [tuple(inert(cell) for cell in row) for row in lines]
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    out = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in lines
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    out.extend(_sample_lines(results))
    counts = summary(results)
    out.append("")
    out.append(
        f"{inert(dataset)}: {counts['total']} rules, {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['skipped']} skipped"
    )
    return "\n".join(out)
