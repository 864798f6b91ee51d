"""SHACL shapes (Turtle) -> rules, after seed 000 (SHACL constraints -> DataHub assertions).

A shape applies to a `dcat:Dataset` in three ways: property shapes inline on the dataset
(`sh:property`), a NodeShape it `dcterms:conformsTo`, or a NodeShape whose `sh:targetClass` is
`dcat:Dataset`. A property shape names its field by `sh:path`, else `sh:node`, else `sh:name`;
its constraints are read on the shape and on the shape its `sh:node` references.

Assertions are off unless `create_assertions` is set; `assertion_types` switches the groups
`required_fields` (minCount/maxCount), `field_size` (minLength/maxLength) and `value_checks`
(minInclusive/maxInclusive/pattern). As the seed says: `sh:datatype` and cross-field constraints
(`sh:lessThan`...) give no assertion, nor do optional fields (an explicit `minCount 0`: none of
their constraints, `maxLength` included) or NodeShapes linked to no dataset (but `check`, which
names the dataset, checks a file of NodeShapes alone). A dataset binds to OpenLineage by its
`dcat:accessURL` / `dcat:downloadURL`; without one it has the seed's `logical` platform
(namespace `logical`, its local name) and binds by name, as a catalog table.
The prefixes the seed's examples leave undeclared (`sh`, `dcat`, `dcterms`, `skos`, `rdf`, `rdfs`,
`xsd`, `ex`) are declared for them.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
from rdflib import RDF, Graph, Literal, Namespace, URIRef
from rdflib.term import Node

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, pattern_from_location
from lineage_quality.contracts.files import read_contract
from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, RuleKind
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.patterns import pattern_refusal

SH = Namespace("http://www.w3.org/ns/shacl#")
DCAT = Namespace("http://www.w3.org/ns/dcat#")
DCTERMS = Namespace("http://purl.org/dc/terms/")

log = logging.getLogger(__name__)
_ZERO = Threshold(Operator.MUST_BE, 0)
_SEVERITY = {SH.Violation: "error", SH.Warning: "warn", SH.Info: "info"}
ASSERTION_TYPES = ("required_fields", "field_size", "value_checks")


@attrs.frozen
class ShaclOptions:
    """The seed's context configuration."""

    create_assertions: bool = False
    assertion_types: Mapping[str, bool] = attrs.field(factory=dict)
    # `check` names the dataset itself: a file with no dcat:Dataset gives its NodeShapes as
    # objects to check it with (`serve` skips them, as the seed says: they bind to nothing).
    standalone_shapes: bool = False

    def __attrs_post_init__(self) -> None:
        unknown = sorted(set(self.assertion_types) - set(ASSERTION_TYPES))
        if unknown:
            known = ", ".join(ASSERTION_TYPES)
            raise ValueError(f"unknown assertion type(s) {', '.join(unknown)}; known: {known}")

    def enabled(self, group: str) -> bool:
        # With create_assertions on, every group defaults to on.
        return self.create_assertions and self.assertion_types.get(group, True)

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> ShaclOptions:
        return cls(
            create_assertions=bool(context.get("create_assertions", False)),
            assertion_types=dict(context.get("assertion_types") or {}),
        )


def local_name(node: Node) -> str:
    text = str(node)
    return re.split(r"[#/:]", text.rstrip("/#"))[-1] or text


def _one(graph: Graph, subject: Node, predicate: URIRef) -> Node | None:
    return next(iter(graph.objects(subject, predicate)), None)


def _number(node: Node | None) -> float | None:
    if isinstance(node, Literal):
        value = node.toPython()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return float(str(node))
        except ValueError:
            return None
    return None


def load_shacl(path: str | os.PathLike[str], options: ShaclOptions) -> list[BoundRules]:
    text, source = read_contract(path)
    return parse_shacl(text, source, options)


# The prefixes seed 000's examples use without declaring them: a file that uses one and does not
# declare it gets it (on one line before the text, so error lines shift by exactly one).
KNOWN_PREFIXES = {
    "sh": str(SH),
    "dcat": str(DCAT),
    "dcterms": str(DCTERMS),
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "ex": "http://example.org/",
}
LOGICAL = "logical"  # the platform (OpenLineage namespace) of a dataset with no access URL


def _with_prefixes(text: str) -> tuple[str, int]:
    """The text with the known prefixes it uses but does not declare, and the lines added."""
    declared = set(re.findall(r"(?im)^\s*@?prefix\s+([A-Za-z][\w.-]*)?:", text))
    used = set(re.findall(r"(?<![\w<\"'#:/.-])([A-Za-z][\w-]*):(?=[A-Za-z_])", text))
    missing = sorted(p for p in used - declared if p in KNOWN_PREFIXES)
    if not missing:
        return text, 0
    head = " ".join(f"@prefix {p}: <{KNOWN_PREFIXES[p]}> ." for p in missing)
    return head + "\n" + text, 1


def parse_shacl(text: str, source: str, options: ShaclOptions) -> list[BoundRules]:
    graph = Graph()
    text, added = _with_prefixes(text)
    try:
        graph.parse(data=text, format="turtle")
    except Exception as exc:  # rdflib raises several kinds; all mean a broken file
        message = str(exc).strip()
        m = re.search(r"line (\d+)", message)
        where = f"line {int(m.group(1)) - added}" if m else None
        raise ContractError(
            source, f"invalid Turtle: {message.splitlines()[0][:300]}", where
        ) from exc
    targeted = [
        s
        for s in graph.subjects(SH.targetClass, DCAT.Dataset)
        if (s, RDF.type, SH.NodeShape) in graph
    ]
    out: list[BoundRules] = []
    for dataset in sorted(set(graph.subjects(RDF.type, DCAT.Dataset)), key=str):
        shapes: list[Node] = [dataset]
        shapes.extend(graph.objects(dataset, DCTERMS.conformsTo))
        shapes.extend(targeted)
        name = local_name(dataset)
        rules: list[Rule] = []
        seen: set[str] = set()
        for shape in shapes:
            for prop in graph.objects(shape, SH.property):
                for rule in _property_rules(graph, prop, name, source, options):
                    if rule.id not in seen:  # the same shape reached two ways counts once
                        seen.add(rule.id)
                        rules.append(rule)
        locations = [
            str(o) for p in (DCAT.accessURL, DCAT.downloadURL) for o in graph.objects(dataset, p)
        ]
        patterns = tuple(pattern_from_location(loc) for loc in locations)
        out.append(
            BoundRules(
                contract=Path(source).stem,
                object_name=name,
                # No location: the seed's `logical` platform, bound by name (a catalog table).
                patterns=patterns or (DatasetPattern(LOGICAL, name),),
                rules=tuple(rules),
                source=f"{source}: {dataset}",
                tables=() if patterns else (name,),
            )
        )
    if not out:
        out.extend(_standalone(graph, source, options))
    return out


def _standalone(graph: Graph, source: str, options: ShaclOptions) -> Iterator[BoundRules]:
    """A file with no dcat:Dataset: its NodeShapes, for `check` (which names the dataset);
    skipped otherwise (seed 000: they bind to no dataset)."""
    shapes = sorted(set(graph.subjects(RDF.type, SH.NodeShape)), key=str)
    if shapes and not options.standalone_shapes:
        log.info("%s: NodeShapes linked to no dcat:Dataset are skipped (nothing to bind)", source)
        return
    for shape in shapes:
        name = local_name(shape)
        rules: list[Rule] = []
        for prop in graph.objects(shape, SH.property):
            rules.extend(_property_rules(graph, prop, name, source, options))
        yield BoundRules(
            contract=Path(source).stem,
            object_name=name,
            patterns=(),
            rules=tuple(rules),
            source=f"{source}: {shape}",
        )


def _field_name(graph: Graph, prop: Node) -> str | None:
    path = _one(graph, prop, SH.path)
    if isinstance(path, URIRef):
        return local_name(path)
    node = _one(graph, prop, SH.node)
    if isinstance(node, URIRef):
        return local_name(node)
    name = _one(graph, prop, SH.name)
    return str(name) if name is not None else None


def _constraint(graph: Graph, prop: Node, predicate: URIRef) -> Node | None:
    """On the property shape, else on the shape its sh:node references."""
    value = _one(graph, prop, predicate)
    if value is None:
        node = _one(graph, prop, SH.node)
        if node is not None:
            value = _one(graph, node, predicate)
    return value


def _property_rules(
    graph: Graph, prop: Node, dataset: str, source: str, options: ShaclOptions
) -> Iterator[Rule]:
    if not options.create_assertions:
        return
    field = _field_name(graph, prop)
    if field is None:
        raise ContractError(source, f"property shape {prop} has no sh:path, sh:node or sh:name")
    severity_node = _constraint(graph, prop, SH.severity)
    severity = _SEVERITY.get(severity_node) if isinstance(severity_node, URIRef) else None
    described = _constraint(graph, prop, SH.description) or _constraint(graph, prop, SH.message)
    where = f"{source}: {dataset} sh:property {field}"

    def make(kind: Kind, constraint: str, description: str, **kw: Any) -> Rule:
        return Rule(
            id=f"{dataset}_{field}_{constraint}",
            kind=kind,
            threshold=_ZERO,
            columns=(field,),
            name=f"{field}_{constraint}",
            description=str(described) if described is not None else description,
            severity=severity,
            origin="shacl",
            constraint=constraint,
            source=where,
            **kw,
        )

    def number(predicate: URIRef) -> float | None:
        node = _constraint(graph, prop, predicate)
        value = _number(node)
        if node is not None and value is None:
            raise ContractError(source, f"{local_name(predicate)} of {field} is not a number")
        return value

    if number(SH.minCount) == 0:
        # seed 000: "Fields with minCount=0 do not generate assertions (they are optional)" -
        # none at all: no length, pattern or range assertion either
        return
    if options.enabled("required_fields"):
        low, high = number(SH.minCount), number(SH.maxCount)
        if low is not None and low >= 1:
            if high == 1:
                yield make(RuleKind.NULL_VALUES, "not_null", f"Field {field} is required")
            else:
                yield make(
                    RuleKind.CARDINALITY,
                    "min_count",
                    f"Field {field} has at least {low:g} value(s)",
                    min_value=low,
                )
                if high is not None:
                    yield make(
                        RuleKind.CARDINALITY,
                        "cardinality",
                        f"Field {field} has {low:g} to {high:g} values",
                        min_value=low,
                        max_value=high,
                    )
    if options.enabled("field_size"):
        low, high = number(SH.minLength), number(SH.maxLength)
        if low is not None:
            yield make(
                RuleKind.LENGTH_RANGE,
                "min_length",
                f"Field {field} is at least {low:g} characters long",
                min_value=low,
            )
        if high is not None:
            yield make(
                RuleKind.LENGTH_RANGE,
                "max_length",
                f"Field {field} is at most {high:g} characters long",
                max_value=high,
            )
    if options.enabled("value_checks"):
        low, high = number(SH.minInclusive), number(SH.maxInclusive)
        if low is not None:
            yield make(
                RuleKind.VALUE_RANGE, "min_inclusive", f"Field {field} >= {low:g}", min_value=low
            )
        if high is not None:
            yield make(
                RuleKind.VALUE_RANGE, "max_inclusive", f"Field {field} <= {high:g}", max_value=high
            )
        pattern = _constraint(graph, prop, SH.pattern)
        if pattern is not None:
            text = str(pattern)
            flags = _constraint(graph, prop, SH.flags)
            if flags is not None and "i" in str(flags):
                text = "(?i)" + text
            problem = pattern_refusal(text)
            if problem:  # one ERROR result at evaluation; the other rules still run
                log.warning("%s: sh:pattern of %s: %s", source, field, problem)
            yield make(
                RuleKind.INVALID_VALUES, "pattern", f"Field {field} matches {text}", pattern=text
            )
