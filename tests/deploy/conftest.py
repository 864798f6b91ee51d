"""Session fixtures for the deployment tests: real servers started from the package registries'
artifacts (no Docker): ``spark_cluster`` (Spark standalone Master + Worker from PySpark's own
distribution), ``hive_metastore`` (Hive metastore Thrift server on Derby, from PySpark's jars),
``s3_server`` (s3proxy on a folder, plus the s3a jars).

A server that cannot be started FAILS the tests that need it, it never skips them: a skipped
deployment test is not a passed one (the policy of tests/e2e/conftest.py's Marquez fixture).
Every test under tests/deploy is marked ``deploy``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from .metastore import HiveMetastore, start_hive_metastore
from .processes import ServerStartError
from .s3server import S3Server, start_s3_server
from .standalone import SparkCluster, start_spark_cluster

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The hook sees the whole session's items: mark only ours.
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.deploy)


def _cannot_start(what: str, exc: BaseException) -> NoReturn:
    pytest.fail(f"cannot start {what}: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A Spark standalone cluster: ``.master_url`` (``spark://127.0.0.1:PORT``),
    ``.master_json_url``, ``.work_dir`` (the Worker's: ``app-*/<executor id>/``),
    ``.spark_conf()``, ``.app_ids(name)``, ``.executor_dirs(app_id)``."""
    base = tmp_path_factory.mktemp("spark-cluster")
    with contextlib.ExitStack() as stack:
        try:
            cluster = stack.enter_context(start_spark_cluster(base))
        except (ServerStartError, OSError) as exc:
            _cannot_start("a Spark standalone cluster", exc)
        yield cluster


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastore]:
    """A Hive metastore: ``.uri`` (``thrift://127.0.0.1:PORT``), ``.warehouse`` (a folder),
    ``.spark_conf()``, ``.databases()``."""
    base = tmp_path_factory.mktemp("hive-metastore")
    with contextlib.ExitStack() as stack:
        try:
            metastore = stack.enter_context(start_hive_metastore(base))
        except (ServerStartError, OSError) as exc:
            _cannot_start("a Hive metastore", exc)
        yield metastore


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """An S3 server: ``.endpoint`` (``http://127.0.0.1:PORT``), ``.access_key``,
    ``.secret_key``, ``.create_bucket(name)``, ``.spark_conf(ship_jars=True)``."""
    base = tmp_path_factory.mktemp("s3")
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(start_s3_server(base))
        except (ServerStartError, OSError) as exc:
            _cannot_start("an S3 server (s3proxy)", exc)
        yield server
