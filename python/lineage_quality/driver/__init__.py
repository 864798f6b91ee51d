"""In-driver mode: `attach(builder, contracts=...)`, `verify()`. See docs/in-driver.md."""

from lineage_quality.driver.attach import attach, verify

__all__ = ["attach", "verify"]
