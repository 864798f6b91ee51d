import pytest

from lineage_quality.contracts.shacl import ShaclOptions, parse_shacl
from lineage_quality.errors import ContractError
from lineage_quality.kinds import RuleKind

PREFIXES = """\
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix dcat: <http://www.w3.org/ns/dcat#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/> .
"""

SHAPES = (
    PREFIXES
    + r"""
ex:TradeDataset a dcat:Dataset ;
    dcat:accessURL <s3://lake/trades> ;
    dcterms:conformsTo ex:TradeSchema ;
    sh:property [ sh:path ex:tradeId ; sh:minCount 1 ; sh:maxCount 1 ;
                  sh:minLength 10 ; sh:maxLength 20 ] .

ex:TradeSchema a sh:NodeShape ;
    sh:property [ sh:path ex:riskWeight ; sh:minInclusive 0.0 ; sh:maxInclusive 100.0 ;
                  sh:pattern "^\\d{1,3}\\.\\d{2}$" ; sh:datatype xsd:decimal ] ;
    sh:property [ sh:node ex:Counterparty ] ;
    sh:property [ sh:name "comment" ; sh:minCount 0 ; sh:maxLength 5 ] ;
    sh:property [ sh:path ex:start ; sh:lessThan ex:end ] .

ex:Counterparty a skos:Concept, sh:PropertyShape ;
    sh:minCount 1 ; sh:maxCount 3 ; sh:severity sh:Warning .

ex:AllDatasets a sh:NodeShape ;
    sh:targetClass dcat:Dataset ;
    sh:property [ sh:path ex:tenant ; sh:minCount 1 ; sh:maxCount 1 ] .

ex:Orphan a sh:NodeShape ;
    sh:property [ sh:path ex:nobody ; sh:minCount 1 ; sh:maxCount 1 ] .

ex:Other a dcat:Dataset .
"""
)

ON = ShaclOptions(create_assertions=True)


def test_the_three_links_field_names_and_the_mapping_table() -> None:
    found = {b.object_name: b for b in parse_shacl(SHAPES, "s.ttl", ON)}
    assert set(found) == {"TradeDataset", "Other"}
    trade, other = found["TradeDataset"], found["Other"]
    assert trade.matches("s3://lake", "trades")
    by_id = {r.id: r for r in trade.rules}
    assert set(by_id) == {
        "TradeDataset_tradeId_not_null",  # inline: minCount 1 + maxCount 1
        "TradeDataset_tradeId_min_length",
        "TradeDataset_tradeId_max_length",
        "TradeDataset_riskWeight_min_inclusive",  # through dcterms:conformsTo
        "TradeDataset_riskWeight_max_inclusive",
        "TradeDataset_riskWeight_pattern",
        "TradeDataset_Counterparty_min_count",  # named by sh:node, constraints on that node
        "TradeDataset_Counterparty_cardinality",
        "TradeDataset_tenant_not_null",  # through sh:targetClass dcat:Dataset
    }  # `comment` (named by sh:name) has minCount 0: optional, no assertion, maxLength neither
    assert by_id["TradeDataset_tradeId_not_null"].kind is RuleKind.NULL_VALUES
    card = by_id["TradeDataset_Counterparty_cardinality"]
    assert (card.kind, card.min_value, card.max_value) == (RuleKind.CARDINALITY, 1, 3)
    assert card.severity == "warn" and card.origin == "shacl" and card.constraint == "cardinality"
    assert by_id["TradeDataset_riskWeight_pattern"].pattern == r"^\d{1,3}\.\d{2}$"
    # sh:datatype and sh:lessThan give no assertion; the orphan NodeShape binds to nothing
    assert not any("start" in i or "nobody" in i for i in by_id)
    assert [r.id for r in other.rules] == ["Other_tenant_not_null"]


def test_assertions_are_off_by_default_and_types_can_be_switched() -> None:
    assert all(b.rules == () for b in parse_shacl(SHAPES, "s.ttl", ShaclOptions()))
    only_size = ShaclOptions(
        create_assertions=True,
        assertion_types={"field_size": True, "required_fields": False, "value_checks": False},
    )
    trade = next(
        b for b in parse_shacl(SHAPES, "s.ttl", only_size) if b.object_name == "TradeDataset"
    )
    assert {r.constraint for r in trade.rules} == {"min_length", "max_length"}
    from_context = ShaclOptions.from_context(
        {"create_assertions": True, "assertion_types": {"value_checks": False}}
    )
    trade = next(
        b for b in parse_shacl(SHAPES, "s.ttl", from_context) if b.object_name == "TradeDataset"
    )
    assert "pattern" not in {r.constraint for r in trade.rules}
    assert "not_null" in {r.constraint for r in trade.rules}
    with pytest.raises(ValueError, match="unknown assertion type"):
        ShaclOptions(create_assertions=True, assertion_types={"sizes": True})


def test_broken_turtle_names_the_line() -> None:
    with pytest.raises(ContractError) as info:
        parse_shacl(
            PREFIXES + "ex:A a dcat:Dataset ;\n  sh:property [ sh:path ex:a \n", "bad.ttl", ON
        )
    assert info.value.path == "bad.ttl" and "invalid Turtle" in info.value.detail
    assert info.value.where is not None and info.value.where.startswith("line ")


def test_bad_pattern_is_kept_for_an_error_result_and_non_numeric_bounds_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = PREFIXES + 'ex:A a dcat:Dataset ; sh:property [ sh:path ex:a ; sh:pattern "(x" ] .'
    rules = [r for b in parse_shacl(bad, "p.ttl", ON) for r in b.rules]
    assert [r.pattern for r in rules if r.pattern] == ["(x"]
    assert "p.ttl: sh:pattern of a: pattern '(x' does not compile" in caplog.text
    bad = PREFIXES + 'ex:A a dcat:Dataset ; sh:property [ sh:path ex:a ; sh:maxLength "long" ] .'
    with pytest.raises(ContractError, match="maxLength of a is not a number"):
        parse_shacl(bad, "p.ttl", ON)


# -- seed 000 as written (issue 41) ------------------------------------------------------------

SEED_INLINE = """\
ex:TradeDataset a dcat:Dataset ;
    sh:property [
        sh:path ex:tradeId ;
        sh:minCount 1 ;
        sh:maxCount 1 ;
        sh:minLength 10 ;
        sh:maxLength 20
    ] .
"""


def test_a_dataset_without_access_url_is_logical_and_binds_by_name() -> None:
    # with assertions off too: the file is accepted (serve no longer refuses it)
    for options in (ShaclOptions(), ShaclOptions(create_assertions=True)):
        (bound,) = parse_shacl(SEED_INLINE, "trades.ttl", options)
        assert bound.patterns[0].namespace == "logical"
        assert bound.matches("logical", "TradeDataset")
        assert bound.matches_table(["default.tradedataset"])
        assert not bound.matches("file", "/TradeDataset")
    assert [r.id for r in bound.rules] == [
        "TradeDataset_tradeId_not_null",
        "TradeDataset_tradeId_min_length",
        "TradeDataset_tradeId_max_length",
    ]


def test_undeclared_seed_prefixes_are_declared_and_error_lines_stay_right() -> None:
    with pytest.raises(ContractError) as info:
        parse_shacl(SEED_INLINE + "ex:Broken a [ .\n", "t.ttl", ShaclOptions())
    assert info.value.where == "line 9"
    with pytest.raises(ContractError):  # a prefix nobody knows is still an error
        parse_shacl("zz:A a dcat:Dataset .\n", "t.ttl", ShaclOptions())


def test_node_shapes_alone_are_skipped_unless_check_names_the_dataset() -> None:
    text = "ex:Schema a sh:NodeShape ;\n    sh:property [ sh:path ex:accountId ; sh:minCount 1 ;"
    text += " sh:maxCount 1 ] .\n"
    on = ShaclOptions(create_assertions=True)
    assert parse_shacl(text, "s.ttl", on) == []
    (bound,) = parse_shacl(
        text, "s.ttl", ShaclOptions(create_assertions=True, standalone_shapes=True)
    )
    assert (bound.object_name, bound.patterns, bound.tables) == ("Schema", (), ())
    assert [r.id for r in bound.rules] == ["Schema_accountId_not_null"]


def test_the_seed_context_block() -> None:
    """Seed 000's configuration block, verbatim, is the options `ShaclOptions.from_context`
    reads: every group on."""
    from pathlib import Path

    block = Path(__file__).resolve().parents[1] / "seed_examples"
    text = (block / "s000_03_context_configuration.py.txt").read_text()
    scope: dict[str, object] = {}
    exec(compile(text, "s000_03", "exec"), scope)  # the seed's own Python block
    options = ShaclOptions.from_context(scope["context"])  # type: ignore[arg-type]
    assert options.create_assertions
    assert all(
        options.enabled(group) for group in ("required_fields", "field_size", "value_checks")
    )
