"""Kafka consumption for reading: the brokers' topics, a partition's bounds, the messages
of an offset range, and, for the `ticdc-sink decode` command, a topic read until it goes
quiet or followed.

One group-less consumer (`assign()`, nothing committed, no group join) per use: the driver
asks for bounds, each Spark task reads its range. Spark's Kafka source works the same way
(offsets are the source's own state, not a consumer group's). This is the package's only
consumer loop; the command shares it.

This module knows confluent-kafka and nothing of Spark or protocols.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.producer import LIBRDKAFKA_LOG, Record
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig

__all__ = ["TopicLog"]


# Messages asked for per consume() call: enough to amortise the call, small enough that a
# batch of large messages stays a few MiB.
_CONSUME_BATCH = 2000
# consume() returns when it has the messages asked for or when its timeout passes; a
# short timeout lets a read ask again (for fewer) instead of idling at a range's end where
# offsets are missing (compaction, transaction markers).
_CONSUME_WAIT_S = 0.2

# How long the broker may hold a fetch that finds no new data (librdkafka's default:
# 500 ms). A log moves from partition to partition (the driver's scans for schemas and
# watermarks read them one after another), and a fetch held at the end of the last one
# delayed the first fetch of the next by up to that long: 0.5 s per partition visited.
_FETCH_WAIT_MAX_MS = "20"

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
            "fetch.wait.max.ms": _FETCH_WAIT_MAX_MS,
            "logger": LIBRDKAFKA_LOG,
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

    def topics(self) -> list[str]:
        """The names of the topics the brokers have, sorted; Kafka's internal topics
        (`__consumer_offsets`, ...) left out, as a Kafka consumer's pattern subscription
        leaves them out.

        Raises:
            DeliveryError: the brokers did not answer.
        """
        metadata = self._metadata(None)
        return sorted(name for name in metadata.topics if not name.startswith("__"))

    def partitions(
        self, wanted: Collection[int] | None = None, *, topic: str | None = None
    ) -> list[int]:
        """The partitions of `topic` (the config's when None; those in `wanted` only,
        when given), sorted.

        Raises:
            DeliveryError: the brokers did not answer, or the topic does not exist.
            ConfigError: a partition in `wanted` that the topic does not have.
        """
        topic = self.config.topic if topic is None else topic
        metadata = self._metadata(topic)
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            reason = _describe(found.error) if found and found.error else "no such topic"
            raise DeliveryError(
                f"cannot read topic {topic} from Kafka brokers "
                f"{self.config.bootstrap_servers}: {reason}; check option topic",
                brokers=self.config.bootstrap_servers,
            )
        present = sorted(found.partitions)
        missing = sorted(set(wanted or ()) - set(present))
        if missing:
            raise ConfigError(
                f"topic {topic} has no partition {missing[0]}; its partitions are "
                f"{_ranges(present)}",
                option="partition",
                value=str(missing[0]),
                allowed=tuple(str(p) for p in present),
            )
        return sorted(set(wanted)) if wanted else present

    def bounds(self, topic: str | None = None) -> dict[int, tuple[int, int]]:
        """Each partition of `topic` (the config's when None) with its (low, high)
        offsets: the first message kept and the next offset to be written.

        Raises:
            DeliveryError: the brokers did not answer, or the topic does not exist.
        """
        topic = self.config.topic if topic is None else topic
        timeout = self.config.poll_timeout_s
        partitions = self.partitions(topic=topic)
        try:
            return {
                p: self._consumer.get_watermark_offsets(
                    TopicPartition(topic, p), timeout=timeout, cached=False
                )
                for p in partitions
            }
        except KafkaException as exc:
            raise self._unreachable(exc, topic) from exc

    def all_bounds(self, topics: Collection[str]) -> dict[tuple[str, int], tuple[int, int]]:
        """`bounds` of every partition of `topics`, keyed by (topic, partition).

        Raises:
            DeliveryError: the brokers did not answer, or a topic does not exist.
        """
        return {(t, p): b for t in topics for p, b in self.bounds(t).items()}

    def read_until_idle(
        self, partitions: Collection[int] | None, *, idle_s: float, timeout_s: float
    ) -> list[Record]:
        """Every message of the topic (of `partitions` only, when given) from the
        beginning, ordered by partition and offset, read until none arrives for `idle_s`
        or `timeout_s` passed in all.

        It does not stop at the high watermarks, since some brokers (Tansu) report them
        wrong after multi-record batches; a topic still being written to is read until
        the writer pauses for `idle_s`.

        Raises:
            DeliveryError, ConfigError: as `partitions`, or a read fails.
        """
        deadline = time.monotonic() + timeout_s
        self._assign(partitions, confluent_kafka.OFFSET_BEGINNING)
        records: list[Record] = []
        idle_until = time.monotonic() + idle_s
        while True:
            now = time.monotonic()
            if now >= deadline or now >= idle_until:
                break
            batch = self._consume(_CONSUME_BATCH, min(idle_until, deadline) - now)
            records.extend(batch)
            if batch:
                idle_until = time.monotonic() + idle_s
        records.sort(key=lambda record: (record.partition, record.offset))
        return records

    def follow(
        self, partitions: Collection[int] | None, *, from_beginning: bool = False
    ) -> Iterator[Record]:
        """The messages of the topic (of `partitions` only, when given) as they arrive,
        from the end of each partition (or its beginning), until the caller stops.

        Raises:
            DeliveryError, ConfigError: as `partitions`, or a read fails.
        """
        start = confluent_kafka.OFFSET_BEGINNING if from_beginning else confluent_kafka.OFFSET_END
        self._assign(partitions, start)
        while True:
            yield from self._consume(_CONSUME_BATCH, 0.5)

    def _assign(self, partitions: Collection[int] | None, offset: int) -> None:
        topic = self.config.topic
        chosen = self.partitions(partitions)
        self._consumer.assign([TopicPartition(topic, p, offset) for p in chosen])

    def _consume(self, count: int, timeout: float) -> list[Record]:
        try:
            messages = self._consumer.consume(count, timeout=timeout)
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        records = []
        for message in messages:
            error = message.error()
            if error is not None:
                raise self._unreachable(error)
            records.append(_record(message))
        return records

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
                elif self._position(offsets) > last:
                    # The range's last offsets hold no message (transaction markers,
                    # aborted records under read_committed): the consumer moved past them.
                    break
                elif time.monotonic() - waited_since < self.config.poll_timeout_s:
                    continue
                else:
                    raise DeliveryError(
                        f"no message arrived from Kafka brokers {self.config.bootstrap_servers} "
                        f"from offset {position} of partition {offsets.partition} of topic "
                        f"{offsets.topic} within {self.config.poll_timeout_s:g} s, though the "
                        f"read ends at offset {offsets.end}; check that the brokers are up, or "
                        "raise option kafkaConsumer.pollTimeoutMs if they are slow",
                        brokers=self.config.bootstrap_servers,
                    )
                for message in messages:
                    error = message.error()
                    if error is not None:
                        raise self._unreachable(error, offsets.topic)
                    offset = message.offset()
                    if offset > last:
                        position = offset
                        break
                    position = offset + 1
                    yield _record(message)
        except KafkaException as exc:
            raise self._unreachable(exc, offsets.topic) from exc
        finally:
            consumer.unassign()

    def _position(self, offsets: OffsetRange) -> int:
        """The consumer's position in the range's partition: the offset after the last
        message it handed out or skipped (librdkafka moves it past control records);
        negative before the first."""
        (found,) = self._consumer.position([TopicPartition(offsets.topic, offsets.partition)])
        return int(found.offset)

    def _metadata(self, topic: str | None) -> Any:
        """The brokers' metadata of `topic` (of every topic when None).

        Raises:
            DeliveryError: the brokers did not answer within the poll timeout.
        """
        timeout = self.config.poll_timeout_s
        try:
            return self._consumer.list_topics(topic, timeout=timeout)
        except KafkaException as exc:
            purpose = "list their topics" if topic is None else f"read topic {topic}"
            raise DeliveryError(
                f"cannot reach Kafka brokers {self.config.bootstrap_servers} within "
                f"{timeout:g} s to {purpose}: {_describe(exc)}",
                brokers=self.config.bootstrap_servers,
            ) from exc

    def _unreachable(
        self, error: KafkaError | KafkaException, topic: str | None = None
    ) -> DeliveryError:
        return DeliveryError(
            f"cannot read topic {self.config.topic if topic is None else topic} from Kafka "
            "brokers "
            f"{self.config.bootstrap_servers}: {_describe(error)}",
            brokers=self.config.bootstrap_servers,
        )


def _record(message: Any) -> Record:
    kind, timestamp = message.timestamp()
    return Record(
        message.partition(),
        message.offset(),
        message.key(),
        message.value(),
        timestamp if kind != confluent_kafka.TIMESTAMP_NOT_AVAILABLE else None,
    )


def _ranges(numbers: list[int]) -> str:
    """`[0, 1, 2, 5]` as "0..2, 5"."""
    parts: list[str] = []
    for n in numbers:
        if parts and parts[-1].split("..")[-1] == str(n - 1):
            parts[-1] = f"{parts[-1].split('..')[0]}..{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts) or "(none)"


def _describe(error: KafkaError | KafkaException) -> str:
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        error = error.args[0]
    if isinstance(error, KafkaError):
        return f"{error.str()} ({error.name()})"
    return str(error)
