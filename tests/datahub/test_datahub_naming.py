"""OpenLineage namespace/name -> DataHub dataset URN, as DataHub's OpenLineage converter does."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.datahub.config import NamingConfig
from lineage_quality.datahub.naming import dataset_name, platform_and_name


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("file", "/data/warehouse/orders", ("file", "/data/warehouse/orders")),
        ("file", "/data/x/", ("file", "/data/x/")),  # bare namespaces keep the name as it is
        ("file:///", "data/x", ("file", "/data/x")),
        ("file://", "/data/x/", ("file", "/data/x")),
        ("s3://bucket", "warehouse/orders", ("s3", "bucket/warehouse/orders")),
        ("s3a://bucket", "warehouse/orders/", ("s3", "bucket/warehouse/orders")),
        ("s3n://bucket/", "/x", ("s3", "bucket//x")),
        ("gs://lake", "raw/events", ("gcs", "lake/raw/events")),
        ("abfss://c@acct.dfs.core.windows.net", "t", ("abs", "c@acct.dfs.core.windows.net/t")),
        ("wasbs://c@acct.blob.core.windows.net", "t", ("abs", "c@acct.blob.core.windows.net/t")),
        ("dbfs://", "/mnt/x", ("dbfs", "mnt/x")),
        ("hdfs://namenode:8020", "/warehouse/orders", ("hdfs", "/warehouse/orders")),
        ("postgres://db:5432", "shop.public.orders", ("postgres", "shop.public.orders")),
        ("mysql://db:3306", "shop.orders", ("mysql", "shop.orders")),
        ("sqlserver://host:1433", "db.dbo.t", ("mssql", "db.dbo.t")),
        ("awsathena://athena.us-east-1.amazonaws.com", "c.db.t", ("athena", "c.db.t")),
        ("snowflake://acct", "DB.SCHEMA.T", ("snowflake", "DB.SCHEMA.T")),
        ("bigquery", "project.dataset.table", ("bigquery", "project.dataset.table")),
        ("kafka://broker:9092", "orders-topic", ("kafka", "orders-topic")),
        ("file.localhost", "s3://bucket/x", ("s3", "bucket/x")),  # URI in the name
    ],
)
def test_platform_and_name(namespace: str, name: str, expected: tuple[str, str]) -> None:
    assert platform_and_name(namespace, name) == expected


def test_lower_case_env_and_platform_instance() -> None:
    config = NamingConfig(env="dev", platform_instance="lake1", lower_case_urns=True)
    ds = dataset_name("s3://Bucket", "Raw/Orders", None, config)
    assert ds is not None
    assert (ds.platform, ds.name, ds.env) == ("s3", "lake1.bucket/raw/orders", "DEV")


def _symlinks(*identifiers: dict[str, str]) -> dict[str, Any]:
    return {"symlinks": {"identifiers": list(identifiers)}}


def test_table_symlink_wins() -> None:
    facets = _symlinks(
        {"namespace": "file:/tmp/spark-warehouse", "name": "default.orders", "type": "TABLE"}
    )
    ds = dataset_name("file", "/tmp/spark-warehouse/orders", facets)
    assert ds is not None and (ds.platform, ds.name) == ("hive", "default.orders")

    glue = _symlinks(
        {"namespace": "arn:aws:glue:eu-west-1:123", "name": "table/sales/orders", "type": "TABLE"}
    )
    ds = dataset_name("s3://b", "sales/orders", glue)
    assert ds is not None and (ds.platform, ds.name) == ("glue", "sales.orders")

    other = _symlinks({"namespace": "s3://b", "name": "x", "type": "LOCATION"})
    ds = dataset_name("s3://b", "sales/orders", other)
    assert ds is not None and (ds.platform, ds.name) == ("s3", "b/sales/orders")

    config = NamingConfig(resolve_symlinks=False)
    ds = dataset_name("file", "/tmp/spark-warehouse/orders", facets, config)
    assert ds is not None and ds.platform == "file"

    alias = NamingConfig(hive_platform_alias="databricks")
    ds = dataset_name("file", "/tmp/spark-warehouse/orders", facets, alias)
    assert ds is not None and ds.platform == "databricks"


def test_unnameable_datasets() -> None:
    assert dataset_name("://x", "y") is None
    assert dataset_name("", "") is None


def test_urns() -> None:
    pytest.importorskip("datahub.metadata.urns")
    from lineage_quality.datahub.urns import dataset_urn

    ds = dataset_name("file", "/data/warehouse/orders")
    assert ds is not None
    assert (
        dataset_urn(ds) == "urn:li:dataset:(urn:li:dataPlatform:file,/data/warehouse/orders,PROD)"
    )
    ds = dataset_name("postgres://db:5432", "shop.public.orders", None, NamingConfig("QA", "pg1"))
    assert ds is not None
    assert (
        dataset_urn(ds) == "urn:li:dataset:(urn:li:dataPlatform:postgres,pg1.shop.public.orders,QA)"
    )
