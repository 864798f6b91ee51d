"""An event's dataset name can never choose what the producer reads beyond what a contract bound
(issue 9, items 4, 5 and 10): exact namespaces, normalized names, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, normalize_name
from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.datasets import escaped_binding, location_of
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold

ROWS = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))


def bound(namespace: str, name: str) -> BoundRules:
    return BoundRules("c", "o", (DatasetPattern(namespace, name),), (ROWS,))


def event(namespace: str, name: str) -> dict[str, object]:
    return {
        "eventType": "COMPLETE",
        "run": {"runId": "01939b9e-0000-7000-8000-000000000000"},
        "job": {"namespace": "j", "name": "j"},
        "inputs": [{"namespace": namespace, "name": name}],
        "outputs": [],
    }


@pytest.mark.parametrize(
    "name",
    [
        "hdfs://attacker:8020/data/x",
        "s3a://other-bucket/x",
        "//attacker/share",
        "relative/path",
    ],
)
def test_a_file_glob_never_binds_a_name_with_a_scheme_or_host(name: str) -> None:
    evaluator = Evaluator([bound("file", "*")])
    assert evaluator.bound(event("file", name)) == {}  # nothing is read, no host is contacted
    with pytest.raises(DatasetError, match="not a dataset name"):
        location_of("file", name)


def test_namespaces_compare_exactly_unless_the_contract_globs() -> None:
    exact = bound("s3://lake", "raw/*")
    assert exact.matches("s3://lake", "raw/orders")
    assert not exact.matches("s3://lake-evil", "raw/orders")
    assert not exact.matches("s3://lak", "raw/orders")
    globbed = bound("s3://lake-*", "raw/*")
    assert globbed.matches("s3://lake-eu", "raw/orders")
    assert not globbed.matches("s3://other", "raw/orders")


@pytest.mark.parametrize(
    ("namespace", "name", "normalized"),
    [
        ("s3://lake", "raw/../finance/payroll", "finance/payroll"),
        ("s3://lake", "raw/./x//y", "raw/x/y"),
        ("s3://lake", "../outside", None),
        ("hdfs://nn:8020", "/data/../etc/x", "/etc/x"),
        ("file", "/data/x/../../etc/shadow", "/etc/shadow"),
        ("gs://b", "a/b/../../../c", None),
    ],
)
def test_names_are_normalized_for_every_namespace(
    namespace: str, name: str, normalized: str | None
) -> None:
    assert normalize_name(namespace, name) == normalized


def test_dot_dot_under_a_uri_namespace_cannot_leave_the_bound_prefix() -> None:
    binding = bound("s3://lake", "raw/*")
    assert not binding.matches("s3://lake", "raw/../finance/payroll")
    assert binding.matches("s3://lake", "raw/x/../orders")
    # ... and what is read is the normalized name that was matched.
    assert location_of("s3://lake", "raw/x/../orders") == "s3a://lake/raw/orders"


def test_symlinks_out_of_a_bound_folder_are_refused(tmp_path: Path) -> None:
    lake, private = tmp_path / "lake", tmp_path / "private"
    (lake / "orders").mkdir(parents=True)
    (lake / "orders" / "part-0.csv").write_text("a\n1\n")
    private.mkdir()
    (private / "payroll.csv").write_text("salary\n1\n")
    os.symlink(private, lake / "link")
    os.symlink(private / "payroll.csv", lake / "orders" / "part-1.csv")
    binding = bound("file", f"{lake}/*")

    def inside(real: str) -> bool:
        return binding.matches("file", real)

    assert binding.matches("file", f"{lake}/link")  # the name alone looks bound ...
    problem = escaped_binding(f"{lake}/link", inside)
    assert problem is not None and str(private) in problem  # ... its real path is not
    inner = escaped_binding(f"{lake}/orders", inside)
    assert inner is not None and "part-1.csv links to" in inner
    (lake / "orders" / "part-1.csv").unlink()
    assert escaped_binding(f"{lake}/orders", inside) is None


def test_a_name_without_namespace_never_means_any_namespace(tmp_path: Path) -> None:
    from lineage_quality.contracts import load_file
    from lineage_quality.errors import ContractError

    head = "apiVersion: v3.1.0\nkind: DataContract\nid: t\nversion: 1.0.0\nstatus: active\n"
    absolute = tmp_path / "abs.yaml"
    absolute.write_text(
        head + "schema:\n  - name: o\n    customProperties:\n"
        "      - {property: openlineage.name, value: /data/orders}\n"
    )
    (binding,) = load_file(absolute)
    assert binding.matches("file", "/data/orders")
    assert not binding.matches("hdfs://attacker:8020", "/data/orders")
    relative = tmp_path / "rel.yaml"
    relative.write_text(
        head + "schema:\n  - name: o\n    customProperties:\n"
        "      - {property: openlineage.name, value: raw/orders}\n"
    )
    with pytest.raises(ContractError, match=r"needs openlineage\.namespace"):
        load_file(relative)
