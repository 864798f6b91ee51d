"""Version and the OpenLineage `_producer` URI of this package."""

__version__ = "0.1.0"
PRODUCER = f"https://github.com/lineage-quality/lineage-quality/tree/v{__version__}"
