import lineage_quality


def test_public_api_is_pinned() -> None:
    assert sorted(lineage_quality.__all__) == [
        "BoundRules",
        "ConfigError",
        "ContractError",
        "DatasetError",
        "DatasetPattern",
        "LineageQualityError",
        "Operator",
        "QualityGateFailed",
        "Rule",
        "RuleKind",
        "RuleResult",
        "Status",
        "Threshold",
        "Unit",
        "__version__",
        "attach",
        "load_contracts",
        "verify",
    ]


def test_pure_core_does_not_import_spark() -> None:
    import subprocess
    import sys

    code = (
        "import sys, lineage_quality, lineage_quality.engine, lineage_quality.producer.enrich, "
        "lineage_quality.contracts; print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
