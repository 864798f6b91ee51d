"""Zero code change: in-driver mode from spark-submit options alone.

    spark-submit --py-files examples/in-driver/sitecustomize.py \\
      --conf spark.lineageQuality.contracts=contracts/ job.py

spark-submit puts `--py-files` on the PYTHONPATH of the driver's Python process before it
starts, so Python's `site` imports that `sitecustomize.py` at start-up; it calls `install()`,
which wraps `SparkSession.Builder.getOrCreate` so the job's own `getOrCreate()` goes through
`attach` first. Settings come from `--conf` (or the environment, which wins):

    spark.lineageQuality.contracts           LINEAGE_QUALITY_CONTRACTS (comma list; required)
    spark.lineageQuality.quarantine          LINEAGE_QUALITY_QUARANTINE
    spark.lineageQuality.quarantineMaxRows   LINEAGE_QUALITY_QUARANTINE_MAX_ROWS
    spark.lineageQuality.waitSeconds         LINEAGE_QUALITY_WAIT_SECONDS
    spark.lineageQuality.outputs             LINEAGE_QUALITY_OUTPUTS (attach's `outputs`, a JSON
                                             list, e.g. [{"type": "webhook", "url": "..."}])

Forwarding uses the usual OpenLineage configuration (openlineage.yml, OPENLINEAGE__...).
Without contracts configured nothing is attached.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from lineage_quality.errors import ConfigError

SETTINGS = {
    "contracts": ("spark.lineageQuality.contracts", "LINEAGE_QUALITY_CONTRACTS"),
    "quarantine": ("spark.lineageQuality.quarantine", "LINEAGE_QUALITY_QUARANTINE"),
    "quarantine_max_rows": (
        "spark.lineageQuality.quarantineMaxRows",
        "LINEAGE_QUALITY_QUARANTINE_MAX_ROWS",
    ),
    "wait_seconds": ("spark.lineageQuality.waitSeconds", "LINEAGE_QUALITY_WAIT_SECONDS"),
    "outputs": ("spark.lineageQuality.outputs", "LINEAGE_QUALITY_OUTPUTS"),
}
OUTPUTS = "outputs"  # the setting of the outputs (a JSON list; not an event's outputs)
_MARK = "_lineage_quality_wrapped"


def _settings(builder: Any) -> dict[str, str]:
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # the JVM, so SparkConf() reads spark-submit's --conf
    conf = SparkConf()
    out = {}
    for name, (key, env) in SETTINGS.items():
        value = os.environ.get(env) or builder._options.get(key) or conf.get(key)
        if value:
            out[name] = str(value)
    return out


def outputs(text: str | None) -> list[Any]:
    """`spark.lineageQuality.outputs`: a JSON list of outputs (each checked by `attach`)."""
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"spark.lineageQuality.outputs is not JSON: {exc}") from exc
    if not isinstance(value, list):
        raise ConfigError("spark.lineageQuality.outputs must be a JSON list of outputs")
    return value


def install() -> None:
    """Wrap SparkSession.Builder.getOrCreate (once) so it attaches lineage-quality first."""
    from pyspark.sql import SparkSession

    from lineage_quality.driver.attach import attach, is_attached
    from lineage_quality.producer.settings import DEFAULTS

    original = SparkSession.Builder.getOrCreate
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def get_or_create(self: SparkSession.Builder) -> SparkSession:
        if not is_attached():
            found = _settings(self)
            if "contracts" in found:
                self = attach(
                    self,
                    contracts=found["contracts"].split(","),
                    quarantine=found.get("quarantine"),
                    quarantine_max_rows=int(
                        found.get("quarantine_max_rows", DEFAULTS.evaluation.quarantine_max_rows)
                    ),
                    wait_seconds=float(found.get("wait_seconds", 600)),
                    outputs=outputs(found.get(OUTPUTS)),
                )
        return original(self)

    setattr(get_or_create, _MARK, True)
    SparkSession.Builder.getOrCreate = get_or_create  # type: ignore[method-assign]
