"""Naming (issue 25): the s3 schemes bind alike, catalog identities are tables not folders, and a
dataset that a contract nearly binds is explained. Pure, no Spark."""

from __future__ import annotations

import pytest

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, canonical_namespace
from lineage_quality.contracts.explain import explain
from lineage_quality.contracts.near_miss_log import NearMissLog
from lineage_quality.evaluation.datasets import (
    location_of,
    outside_table_location,
    quoted_table,
    same_location,
)


@pytest.mark.parametrize("contract", ["s3://lake", "s3a://lake", "s3n://lake", "S3A://lake"])
@pytest.mark.parametrize("event", ["s3://lake", "s3a://lake", "s3n://lake"])
def test_the_s3_schemes_bind_alike(contract: str, event: str) -> None:
    assert DatasetPattern(contract, "orders/*").matches(event, "orders/2026")
    other_bucket = event.replace("lake", "lake2")
    assert not DatasetPattern(contract, "orders/*").matches(other_bucket, "orders/x")


def test_other_schemes_stay_apart() -> None:
    assert not DatasetPattern("gs://lake", "orders").matches("s3://lake", "orders")
    assert canonical_namespace("hdfs://nn:8020") == "hdfs://nn:8020"
    assert canonical_namespace("file") == "file"


@pytest.mark.parametrize("namespace", ["s3://lake", "s3a://lake", "s3n://lake"])
def test_every_s3_scheme_is_read_through_s3a(namespace: str) -> None:
    assert location_of(namespace, "orders/x") == "s3a://lake/orders/x"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("file:/w/t", "/w/t", True),
        ("file:///w/t/", "/w/t", True),
        ("s3a://b/w/t", "s3://b/w/t/", True),
        ("/w/t", "/w/t2", False),
        ("s3://b/w/t", "gs://b/w/t", False),
        ("/w/x/../t", "/w/t", True),
    ],
)
def test_same_location(a: str, b: str, same: bool) -> None:
    assert same_location(a, b) is same


def test_a_table_name_is_quoted_as_an_identifier() -> None:
    assert quoted_table("default.orders") == "`default`.`orders`"
    # whatever a name holds, it stays inside its backticks (each one doubled)
    assert quoted_table("db.x` ; DROP TABLE y") == "`db`.`x`` ; DROP TABLE y`"


def _symlink(namespace: str, name: str = "default.orders") -> dict[str, object]:
    return {"symlinks": {"identifiers": [{"namespace": namespace, "name": name, "type": "TABLE"}]}}


def test_a_hive_identity_is_a_table_not_a_folder() -> None:
    """The listener names a metastore table `hive://HOST:PORT` + `db.table`: that says nothing
    of where it lies, so it is read through the evaluator's catalog, which is told how."""
    why = outside_table_location("file", "/wh/orders", _symlink("hive://127.0.0.1:9083")) or ""
    assert "not inside the location" not in why
    assert "a table identity rather than a location" in why
    assert "spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:9083" in why


def test_a_warehouse_or_bucket_identity_still_guards_the_path() -> None:
    assert outside_table_location("file", "/wh/orders", _symlink("file:/wh")) is None
    assert outside_table_location("file", "/etc/x", _symlink("file:/wh")) is not None
    assert outside_table_location("s3://lake", "/t", _symlink("s3a://lake")) is None
    assert outside_table_location("s3://other", "/t", _symlink("s3a://lake")) is not None


BINDINGS = [
    BoundRules("c.yaml", "orders", (DatasetPattern("s3a://lake", "orders"),), ()),
    BoundRules("c.yaml", "clean", (DatasetPattern("file", "warehouse/clean"),), ()),
    BoundRules("c.yaml", "sales", (), (), tables=("sales.orders",)),
]


@pytest.mark.parametrize(
    ("namespace", "name", "tables", "why"),
    [
        ("s3://lake2", "orders", (), "its namespace s3://lake2 is not s3a://lake"),
        ("gs://lake", "orders", (), "(another scheme)"),
        ("file", "/data/warehouse/clean", (), "'*/warehouse/clean' would bind it"),
        ("file", "/x/y", ("default.orders",), "the contract binds table sales.orders"),
    ],
)
def test_near_misses_say_what_misses(
    namespace: str, name: str, tables: tuple[str, ...], why: str
) -> None:
    found = explain(BINDINGS, namespace, name, tables)
    assert not found.bound
    assert any(why in m.why for m in found.near), [m.why for m in found.near]


def test_bound_datasets_say_by_what() -> None:
    by_path = explain(BINDINGS, "s3://lake", "orders")
    assert [m.by for m in by_path.matches] == ["path s3a://lake + orders"]
    by_table = explain(BINDINGS, "file", "/w/o", ["SALES.Orders"])
    assert [m.by for m in by_table.matches] == ["table sales.orders"]
    assert explain(BINDINGS, "file", "/nothing/like/it").near == ()


def test_serve_logs_a_near_miss_once(caplog: pytest.LogCaptureFixture) -> None:
    log = NearMissLog(BINDINGS, limit=2)
    with caplog.at_level("WARNING", logger="lineage_quality.bindings"):
        assert log.check("s3://lake2", "orders") is not None
        assert log.check("s3://lake2", "orders") is None  # once
        assert log.check("file", "/nothing") is None  # no near miss: nothing said
    assert len(caplog.records) == 1
    assert "s3://lake2:orders is bound by no contract, but nearly" in caplog.records[0].message
    # bounded: the least recently seen is forgotten, and said again if seen again
    log.check("file", "/a")
    log.check("file", "/b")
    assert log.check("s3://lake2", "orders") is not None
