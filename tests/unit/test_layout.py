"""The package's layout holds (issue 27.1): no module over MAX_LINES lines, and no import circle.

Imports are read from the source (ast), every `import` and `from ... import` of the package,
also those inside functions (a lazy import is a dependency all the same); only imports under
`if TYPE_CHECKING:` are left out (annotations, never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "lineage_quality"
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _runtime_nodes(tree: ast.AST, annotations: bool = False) -> list[ast.AST]:
    """Every node of `tree` except what is under `if TYPE_CHECKING:` (unless `annotations`)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if (
                not annotations
                and isinstance(child, ast.If)
                and "TYPE_CHECKING" in ast.unparse(child.test)
            ):
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def imports_of(
    name: str, path: Path, modules: dict[str, Path], annotations: bool = False
) -> set[str]:
    """The package's modules that module `name` (at `path`) imports (`annotations`: those under
    `if TYPE_CHECKING:` too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text()), annotations):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:  # `from package import module` names a module
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    modules = _modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert circles(graph) == []


def test_no_import_circle_even_through_annotations() -> None:
    """Issue 38: two modules that need each other's types are one concept, or one of them
    declares what it needs (a Protocol): no circle, `TYPE_CHECKING` imports included."""
    modules = _modules()
    graph = {
        name: imports_of(name, path, modules, annotations=True) for name, path in modules.items()
    }
    assert circles(graph) == []


# The pure core and the outputs never reach up into the service that runs them (issue 38: no
# back-arrow). `producer`, `driver` and the commands may import anything below them.
CORE = (
    "rules", "engine", "contracts", "facets", "datahub", "history", "results", "measures",
    "evaluation", "rawjson", "lineage", "values", "kinds",
)  # fmt: skip


def test_the_core_never_imports_the_producer() -> None:
    modules = _modules()
    arrows = {
        (name, target)
        for name, path in modules.items()
        if name.split(".")[1:2] and name.split(".")[1] in CORE
        for target in imports_of(name, path, modules, annotations=True)
        if target.startswith("lineage_quality.producer")
    }
    assert arrows == set()


def packages_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Folder to folder: `lineage_quality.X` -> `lineage_quality.Y` when a module of X (or X
    itself, a root module) imports one of Y, `TYPE_CHECKING` imports included."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {package(name): set() for name in modules}
    for name, path in modules.items():
        for target in imports_of(name, path, modules, annotations=True):
            if package(target) != package(name):
                graph[package(name)].add(package(target))
    return graph


def test_no_import_circle_between_packages() -> None:
    """Lower packages never import higher ones: `values` (the ground floor) imports nothing of
    the package, and no folder reaches back to one that reaches it."""
    modules = _modules()
    graph = packages_graph(modules)
    assert circles(graph) == []
    assert graph["lineage_quality.values"] == set()


BENCH = PACKAGE.parents[1] / "bench"


def test_no_import_circle_between_the_bench_modules() -> None:
    """bench/ runs its modules as scripts side by side (`import producer`): no circle there
    either, lazy imports and `TYPE_CHECKING` ones included."""
    scripts = {p.stem: p for p in BENCH.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in scripts.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
        graph[name] = {m for m in found if m in scripts and m != name}
    assert "producer" in graph and "kafka_path" in graph
    assert circles(graph) == []


# What an event's JSON holds, read straight from the parsed tree: `.get(...)` of these keys, and
# subscripts of the dataset lists and the event's type and time.
EVENT_GETS = frozenset(
    {"run", "inputs", "outputs", "eventType", "eventTime", "inputFacets", "outputFacets"}
)
EVENT_SUBSCRIPTS = frozenset({"inputs", "outputs", "eventType", "eventTime"})
# Besides the event type (values/event.py), the modules that touch an event's raw tree: the
# receiver's checks of what it accepts (and the follow-up event it writes), enrich (which writes
# our facets into a copy), and the Kafka message key (OpenLineage's own function, for job and
# dataset events too).
RAW_EVENT_READERS = {
    "lineage_quality.values.event",
    "lineage_quality.producer.events",
    "lineage_quality.producer.enrich",
    "lineage_quality.producer.kafka.keys",
}


def raw_event_reads(path: Path) -> list[int]:
    """The lines of `path` that read an event's parsed tree directly."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in EVENT_GETS
        ) or (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value in EVENT_SUBSCRIPTS
        ):
            found.append(node.lineno)
    return sorted(found)


def test_events_are_read_through_the_event_type() -> None:
    """Every module reads events through `values.event.Event`; the raw tree only where it is
    checked or written back (at most 3 modules besides the event type)."""
    modules = _modules()
    raw = {name: lines for name, path in modules.items() if (lines := raw_event_reads(path))}
    assert set(raw) - RAW_EVENT_READERS == set(), {n: raw[n] for n in set(raw) - RAW_EVENT_READERS}
    assert len(RAW_EVENT_READERS - {"lineage_quality.values.event"}) <= 3
    assert "lineage_quality.values.event" in raw  # the check sees what it is looking for


def test_the_producer_service_and_the_settings_stay_small() -> None:
    """The producer fans out to listeners (service.py <= 350 lines); the settings are a few
    groups, not a flat list (<= 12 top-level fields)."""
    import attrs

    from lineage_quality.producer.settings import FLAT, Settings

    service = PACKAGE / "producer" / "service.py"
    assert len(service.read_text().splitlines()) <= 350
    assert len(attrs.fields(Settings)) <= 12
    for flat, (group, field) in FLAT.items():  # every flat name reaches one field of a group
        assert field in attrs.fields_dict(type(getattr(Settings(), group))), flat


def test_a_rule_holds_what_every_rule_has_and_its_kind_the_rest() -> None:
    """Kind-specific parameters live in the kind's own options class, not on `Rule`."""
    import attrs

    from lineage_quality.kinds import RuleKind
    from lineage_quality.rules import Operator, Rule, Threshold
    from lineage_quality.rules.model import PARAMETERS

    fields = {f.name for f in attrs.fields(Rule)}
    assert len(fields) <= 20
    assert fields.isdisjoint(PARAMETERS)
    rule = Rule(id="r", kind=RuleKind.INVALID_VALUES, columns=["s"], valid_values=["a"],
                threshold=Threshold(Operator.MUST_BE, 0))  # fmt: skip
    assert type(rule.options).__module__ == "lineage_quality.kinds.invalid_values"
    assert rule.valid_values == ("a",)


def test_circles_are_found() -> None:
    # the check itself: a circle through three modules, and two modules importing each other
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["e", "f"]]


def test_no_module_over_the_line_bound() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"split by concept: modules over {MAX_LINES} lines"


def test_test_modules_have_unique_names() -> None:
    """pytest imports test modules by their file name (no packages under tests/): two of the
    same name in two folders stop the whole collection."""
    names = [p.name for p in (PACKAGE.parents[1] / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
