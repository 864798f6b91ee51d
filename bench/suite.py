"""The producer's figures of `make bench`: bench/producer.py's HTTP path and jobs, with the
Kafka path (bench/kafka_path.py) beside them in the same sitting. The one module that knows
both: producer.py and kafka_path.py never import each other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kafka_path
import producer


def _kafka_case(tmp: Path, events: list[bytes], passing: dict[str, Any]) -> dict[str, Any]:
    """kafka_path's figures (topic -> serve -> topic, 1 and 2 consumers); {"skipped": why}
    where there is no Kafka here."""
    why = kafka_path.usable()
    return {"skipped": why} if why else kafka_path.cases(tmp, events, passing)


def _kafka_markdown(kafka: dict[str, Any]) -> list[str]:
    if "kafka_1" in kafka:
        return kafka_path.markdown(kafka)
    if kafka:
        return ["## Kafka in and out", "", f"Not measured: {kafka['skipped']}.", ""]
    return []


def run_producer(results: Path) -> dict[str, Any]:
    """bench/producer.py's `run_all` with the Kafka path beside it."""
    return producer.run_all(results, _kafka_case, _kafka_markdown)
