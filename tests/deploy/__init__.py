"""Deployment tests: lineage-quality against real servers (Spark standalone, Hive metastore, S3)
started by the session fixtures in conftest.py from the package registries' artifacts."""
