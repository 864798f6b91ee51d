"""Kafka, as the producer's sink and source (issue 43). Kafka in is `consumer.KafkaIntake` (made
by `serve`; docs/producer.md, "Kafka in"). Kafka out is `KafkaAckedTransport`, the
transport of `type: kafka`, which takes an event only once the broker acknowledged it, keyed by
`message_key` (OpenLineage's run key) so that a run's events share a partition.

confluent-kafka (the `kafka` extra) is imported when a transport is made, never by this package.
"""

from __future__ import annotations

from lineage_quality.producer.kafka.keys import message_key
from lineage_quality.producer.kafka.transport import (
    KafkaAckedTransport,
    KafkaNotDelivered,
    KafkaRefused,
)

__all__ = ["KafkaAckedTransport", "KafkaNotDelivered", "KafkaRefused", "message_key"]
