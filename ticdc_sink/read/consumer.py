"""Kafka consumption for reading: a partition's bounds, and the messages of an offset range.

One group-less consumer (`assign()`, nothing committed, no group join) per use: the driver
asks for bounds, each Spark task reads its range. Spark's Kafka source works the same way
(offsets are the source's own state, not a consumer group's).

This module knows confluent-kafka and nothing of Spark or protocols.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.producer import Record
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig

__all__ = ["TopicLog"]

logger = logging.getLogger(__name__)

# Messages asked for per consume() call: enough to amortise the call, small enough that a
# batch of large messages stays a few MiB.
_CONSUME_BATCH = 2000
# consume() returns when it has the messages asked for or when its timeout passes; a
# short timeout lets a read ask again (for fewer) instead of idling at a range's end where
# offsets are missing (compaction, transaction markers).
_CONSUME_WAIT_S = 0.2

ConsumerFactory = Callable[[dict[str, Any]], Any]


class TopicLog:
    """The messages of one topic, read with a consumer made from the read options.

    Not thread-safe; close it (or use it as a context manager) to free the consumer.
    """

    def __init__(
        self, config: ReadConfig, consumer_factory: ConsumerFactory = confluent_kafka.Consumer
    ) -> None:
        """Raises:
        ConfigError: librdkafka refuses a `kafka.*` setting.
        """
        settings: dict[str, Any] = {
            "group.id": "ticdc-sink-reader",
            "enable.auto.commit": "false",
            "enable.partition.eof": "false",
            "logger": logger,
        }
        settings.update(dict(config.client))
        settings["bootstrap.servers"] = config.bootstrap_servers
        self.config = config
        try:
            self._consumer = consumer_factory(settings)
        except KafkaException as exc:
            raise ConfigError(
                f"the kafka.* settings are refused by the Kafka client: {_describe(exc)}; "
                "reading takes librdkafka consumer settings",
                option="kafka.*",
            ) from exc

    def __enter__(self) -> TopicLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._consumer.close()

    def bounds(self) -> dict[int, tuple[int, int]]:
        """Each partition's (low, high) offsets: the first message kept and the next
        offset to be written.

        Raises:
            DeliveryError: the brokers did not answer, or the topic does not exist.
        """
        topic = self.config.topic
        timeout = self.config.poll_timeout_s
        try:
            metadata = self._consumer.list_topics(topic, timeout=timeout)
            found = metadata.topics.get(topic)
            if found is None or found.error is not None or not found.partitions:
                reason = _describe(found.error) if found and found.error else "no such topic"
                raise DeliveryError(
                    f"cannot read topic {topic} from Kafka brokers "
                    f"{self.config.bootstrap_servers}: {reason}; check option topic",
                    brokers=self.config.bootstrap_servers,
                )
            return {
                p: self._consumer.get_watermark_offsets(
                    TopicPartition(topic, p), timeout=timeout, cached=False
                )
                for p in sorted(found.partitions)
            }
        except KafkaException as exc:
            raise self._unreachable(exc) from exc

    def read(self, offsets: OffsetRange) -> Iterator[Record]:
        """The messages of `offsets` in offset order (offsets a compacted or transactional
        topic skips are simply absent).

        Raises:
            DeliveryError: a fetch fails, or no message arrives within the poll timeout
                before the range's end.
        """
        if offsets.empty:
            return
        consumer = self._consumer
        consumer.assign([TopicPartition(offsets.topic, offsets.partition, offsets.start)])
        last = offsets.end - 1
        position = offsets.start
        waited_since = time.monotonic()
        try:
            while position <= last:
                wanted = min(_CONSUME_BATCH, last - position + 1)
                messages = consumer.consume(wanted, timeout=_CONSUME_WAIT_S)
                if messages:
                    waited_since = time.monotonic()
                elif time.monotonic() - waited_since < self.config.poll_timeout_s:
                    continue
                else:
                    raise DeliveryError(
                        f"no message arrived from offset {position} of partition "
                        f"{offsets.partition} of topic {offsets.topic} within "
                        f"{self.config.poll_timeout_s:g} s, though the read ends at offset "
                        f"{offsets.end}; raise option kafkaConsumer.pollTimeoutMs if the "
                        "brokers are slow",
                        brokers=self.config.bootstrap_servers,
                    )
                for message in messages:
                    error = message.error()
                    if error is not None:
                        raise self._unreachable(error)
                    offset = message.offset()
                    if offset > last:
                        position = offset
                        break
                    position = offset + 1
                    kind, timestamp = message.timestamp()
                    yield Record(
                        message.partition(),
                        offset,
                        message.key(),
                        message.value(),
                        timestamp if kind != confluent_kafka.TIMESTAMP_NOT_AVAILABLE else None,
                    )
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        finally:
            consumer.unassign()

    def _unreachable(self, error: KafkaError | KafkaException) -> DeliveryError:
        return DeliveryError(
            f"cannot read topic {self.config.topic} from Kafka brokers "
            f"{self.config.bootstrap_servers}: {_describe(error)}",
            brokers=self.config.bootstrap_servers,
        )


def _describe(error: KafkaError | KafkaException) -> str:
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        error = error.args[0]
    if isinstance(error, KafkaError):
        return f"{error.str()} ({error.name()})"
    return str(error)
