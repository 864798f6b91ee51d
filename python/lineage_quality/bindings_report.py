"""`lineage-quality bindings`: which datasets of recorded OpenLineage events bind to which rules,
and why the others do not.

The events are a file as the OpenLineage file transport writes it (one JSON event per line), or
a JSON array of events. Each distinct dataset (role, namespace, name) is shown once, with the
contract objects whose rules bind to it (by path pattern or by catalog table) or, when none do,
the contract objects that nearly bind it (contracts/explain.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.contracts import BoundRules
from lineage_quality.contracts.explain import Explanation, explain
from lineage_quality.datasets import table_names
from lineage_quality.errors import ConfigError
from lineage_quality.inert import inert

MAX_EVENT_BYTES = 64 * 1024 * 1024  # a single event line larger than this is refused


@attrs.frozen
class SeenDataset:
    role: str  # "input" or "output"
    explanation: Explanation
    events: int  # how many events name it


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """The events of a file: JSON lines, or one JSON array. A line that is not a JSON object is
    an error naming the file and line."""
    try:
        with path.open("r", encoding="utf-8") as file:
            first = file.read(1)
            while first.isspace():
                first = file.read(1)
            file.seek(0)
            if first == "[":
                events = json.load(file)
                for number, event in enumerate(events, 1):
                    if not isinstance(event, dict):
                        raise ConfigError(f"{path}: item {number} of the array is not an event")
                    yield event
                return
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                if len(line) > MAX_EVENT_BYTES:
                    raise ConfigError(f"{path}: line {number}: an event over {MAX_EVENT_BYTES} B")
                try:
                    event = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{path}: line {number}: not JSON ({exc.msg})") from exc
                if not isinstance(event, dict):
                    raise ConfigError(f"{path}: line {number}: not a JSON object (an event)")
                yield event
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the events: {exc}") from exc


def seen_datasets(
    bindings: Sequence[BoundRules], events: Iterator[dict[str, Any]]
) -> list[SeenDataset]:
    found: dict[tuple[str, str, str], SeenDataset] = {}
    for event in events:
        for role in ("inputs", "outputs"):
            for dataset in event.get(role) or []:
                if not isinstance(dataset, dict):
                    continue
                namespace, name = dataset.get("namespace"), dataset.get("name")
                if not isinstance(namespace, str) or not isinstance(name, str):
                    continue
                key = (role, namespace, name)
                tables = table_names(dataset.get("facets"))
                seen = found.get(key)
                if seen is None or (tables and not seen.explanation.tables):
                    explanation = explain(bindings, namespace, name, tables)
                    count = seen.events if seen else 0
                    seen = SeenDataset(role[:-1], explanation, count)
                found[key] = attrs.evolve(seen, events=seen.events + 1)
    return sorted(found.values(), key=lambda s: (not s.explanation.bound, s.role, _id(s)))


def _id(seen: SeenDataset) -> str:
    return f"{seen.explanation.namespace}:{seen.explanation.name}"


def _object(binding: BoundRules) -> str:
    return f"{binding.contract} / {binding.object_name} ({len(binding.rules)} rule(s))"


def to_text(seen: Sequence[SeenDataset]) -> str:
    """One block per dataset; every text from an event is made inert for the terminal."""
    lines: list[str] = []
    for item in seen:
        e = item.explanation
        tables = f"  [table {', '.join(e.tables)}]" if e.tables else ""
        head = f"{item.role:<6} {e.namespace}:{e.name}{tables}  ({item.events} event(s))"
        lines.append(inert(head))
        if e.bound:
            for match in e.matches:
                lines.append(inert(f"    bound  {_object(match.binding)} by {match.by}"))
        elif e.near:
            for miss in e.near:
                lines.append(inert(f"    NEARLY {_object(miss.binding)}: {miss.why}"))
        else:
            lines.append("    no contract binds it")
    bound = sum(1 for s in seen if s.explanation.bound)
    near = sum(1 for s in seen if not s.explanation.bound and s.explanation.near)
    lines.append(
        f"{len(seen)} dataset(s): {bound} bound, {near} nearly bound, "
        f"{len(seen) - bound - near} not bound"
    )
    return "\n".join(lines)


def to_json(seen: Sequence[SeenDataset]) -> list[dict[str, Any]]:
    return [
        {
            "role": s.role,
            "namespace": s.explanation.namespace,
            "name": s.explanation.name,
            "tables": list(s.explanation.tables),
            "events": s.events,
            "bound": [
                {
                    "contract": m.binding.contract,
                    "object": m.binding.object_name,
                    "rules": [r.id for r in m.binding.rules],
                    "by": m.by,
                }
                for m in s.explanation.matches
            ],
            "nearly": [
                {"contract": n.binding.contract, "object": n.binding.object_name, "why": n.why}
                for n in s.explanation.near
            ],
        }
        for s in seen
    ]
