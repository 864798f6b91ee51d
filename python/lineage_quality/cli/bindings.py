"""`lineage-quality bindings`: which datasets of recorded OpenLineage events bind to which rules,
and why the others do not.

The events are a file as the OpenLineage file transport writes it (one JSON event per line), or
a JSON array of events. Each distinct dataset (role, namespace, name) is shown once, with the
contract objects whose rules bind to it (by path pattern or by catalog table) or, when none do,
the contract objects that nearly bind it (contracts/explain.py).

The file may come from anywhere: it is read within byte bounds and each event is checked before
it is used, so a bad one is one line naming the file and line (exit 2), never a traceback.
"""

from __future__ import annotations

import argparse
import decimal
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from lineage_quality.cli.options import add_shacl_flags, shacl_options
from lineage_quality.contracts import BoundRules
from lineage_quality.contracts.explain import Explanation, explain
from lineage_quality.errors import ConfigError
from lineage_quality.inert import inert
from lineage_quality.producer.events import dataset_shape_problem
from lineage_quality.values.event import Event

MAX_EVENT_BYTES = 64 * 1024 * 1024  # one event line larger than this is refused
MAX_ARRAY_BYTES = 64 * 1024 * 1024  # a file that is one JSON array: larger is refused
_CHUNK = 64 * 1024
_DECODER = json.JSONDecoder(parse_int=decimal.Decimal)  # integers of any length; unused here


@attrs.frozen
class SeenDataset:
    role: str  # "input" or "output"
    explanation: Explanation
    events: int  # how many events name it


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """The events of a file: JSON lines, or one JSON array. Read within bounds (a line, or the
    array, is never read past its bound before it is refused), and each event is checked to be
    what `seen_datasets` reads: anything else (not JSON, nested past Python's stack, a lone
    surrogate, `inputs` that is no list, `facets` that is no object...) is a ConfigError naming
    the file and line (exit 2), never a traceback."""
    try:
        with path.open("rb") as file:
            if _first_byte(file) == b"[":
                yield from _array(path, file)
                return
            number = 0
            while line := file.readline(MAX_EVENT_BYTES + 1):
                number += 1
                if len(line) > MAX_EVENT_BYTES:
                    raise ConfigError(f"{path}: line {number}: an event over {MAX_EVENT_BYTES} B")
                if line.strip():
                    yield _event(path, f"line {number}", line)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the events: {exc}") from exc


def _first_byte(file: BinaryIO) -> bytes:
    """The file's first byte that is not white space (b"" if none); the file is left at 0."""
    try:
        while chunk := file.read(_CHUNK):
            text = chunk.lstrip()
            if text:
                return text[:1]
        return b""
    finally:
        file.seek(0)


def _array(path: Path, file: BinaryIO) -> Iterator[dict[str, Any]]:
    data = file.read(MAX_ARRAY_BYTES + 1)
    if len(data) > MAX_ARRAY_BYTES:
        raise ConfigError(
            f"{path}: a JSON array over {MAX_ARRAY_BYTES} B (write JSON lines, one event a line, "
            "as the file transport does)"
        )
    text = _text(path, "line 1", data)
    position = text.index("[") + 1
    line, counted = 1, 0
    while True:
        position = _skip_space(text, position)
        if text.startswith("]", position):
            break
        line += text.count("\n", counted, position)
        counted = position
        where = f"line {line}"
        try:
            event, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: {where}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise ConfigError(f"{path}: {where}: not JSON (nested too deep)") from None
        yield _checked(path, where, event)
        position = _skip_space(text, position)
        if text.startswith(",", position):
            position += 1
        elif not text.startswith("]", position):
            line += text.count("\n", counted, position)
            raise ConfigError(f"{path}: line {line}: not JSON (expected , or ] in the array)")
    if text[position + 1 :].strip():
        line += text.count("\n", counted, position)
        raise ConfigError(f"{path}: line {line}: not JSON (text after the array)")


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _text(path: Path, where: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: {where}: not UTF-8 ({exc.reason})") from None


def _event(path: Path, where: str, line: bytes) -> dict[str, Any]:
    text = _text(path, where, line)
    try:
        event = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: {where}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise ConfigError(f"{path}: {where}: not JSON (nested too deep)") from None
    return _checked(path, where, event)


def _checked(path: Path, where: str, event: object) -> dict[str, Any]:
    """`event` if it has the shape `seen_datasets` reads, else a ConfigError saying what."""
    problem = dataset_shape_problem(event)
    if problem is not None:
        raise ConfigError(f"{path}: {where}: {problem}")
    assert isinstance(event, dict)
    return event


def seen_datasets(
    bindings: Sequence[BoundRules], events: Iterator[dict[str, Any]]
) -> list[SeenDataset]:
    found: dict[tuple[str, str, str], SeenDataset] = {}
    for event in events:
        for dataset in Event.of(event).datasets:
            role, namespace, name = dataset.ref.role, dataset.ref.namespace, dataset.ref.name
            key = (role, namespace, name)
            tables = list(dataset.tables)
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


def add_parser(sub: Any) -> None:
    """The `bindings` command."""
    bindings = sub.add_parser(
        "bindings",
        help="which datasets of recorded events bind to which rules, and why others do not",
    )
    bindings.add_argument(
        "--contracts", action="append", required=True, metavar="PATH",
        help="contract file or folder (repeatable, as serve takes them)",
    )  # fmt: skip
    bindings.add_argument(
        "--events", required=True, metavar="FILE",
        help="OpenLineage events: JSON lines (the file transport's output) or a JSON array",
    )  # fmt: skip
    bindings.add_argument("--output", choices=["text", "json"], default="text")
    add_shacl_flags(bindings)
    bindings.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from lineage_quality.contracts import load_contracts

    bindings = load_contracts(args.contracts, shacl=shacl_options(args))
    seen = seen_datasets(bindings, read_events(Path(args.events)))
    if args.output == "json":
        print(json.dumps(to_json(seen), indent=2))
    else:
        print(to_text(seen))
    return 0
