"""Kafka consumption for reading: the brokers' topics, a partition's bounds, the messages
of an offset range, and, for the `ticdc-sink decode` command, a topic read until it goes
quiet or followed.

One group-less consumer (`assign()`, nothing committed, no group join) per use: the driver
asks for bounds, each Spark task reads its range. Spark's Kafka source works the same way
(offsets are the source's own state, not a consumer group's). This is the package's only
consumer loop; the command shares it.

Where a partition ends is not taken on the brokers' word alone: some brokers (Tansu) answer
ListOffsets with an end below messages they hold, so `bounds` reads on from the reported
end until the consumer says it reached the partition's end (librdkafka's partition EOF,
which follows the fetch responses: the high watermark, or the last stable offset under
read_committed). The same EOF ends a range whose last offsets hold no message (transaction
markers, compaction) at once, instead of waiting for messages that never come. An offset
that is no longer on the brokers is an error (`auto.offset.reset=error`), never a silent
jump to the end: data loss is reported as Spark's Kafka source reports it
(`failOnDataLoss`).

This module knows confluent-kafka and nothing of Spark or protocols; `LibrdkafkaConsumer`
is what it uses of a consumer (unit tests pass fakes as `consumer_factory`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Collection, Generator, Mapping
from typing import Any, Protocol, TypeAlias

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import ClusterMetadata

from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.kafka_client import LIBRDKAFKA_LOG
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record

__all__ = ["ConsumerFactory", "LibrdkafkaConsumer", "TopicLog"]

logger = logging.getLogger(__name__)


# Messages asked for per consume() call: enough to amortise the call, small enough that a
# batch of large messages stays a few MiB, and that its messages (which Python's garbage
# collector tracks) are gone before they reach the collector's oldest generation: at 2000
# they set off 2-3 full collections in a read of 200 000 messages, 1 at 500.
_CONSUME_BATCH = 500
# consume() returns when it has the messages asked for or when its timeout passes; a
# short timeout lets a read ask again (for fewer) instead of idling at a range's end where
# offsets are missing (compaction, transaction markers).
_CONSUME_WAIT_S = 0.2

# How long the broker may hold a fetch that finds no new data (librdkafka's default:
# 500 ms). A read moves from range to range (the ranges packed in one task, the driver's
# scans for schemas and watermarks), and the fetch in flight at the end of one range
# delays the first fetch of the next by up to that long: 21-23 ms per range at 20 ms,
# 2-3 ms at 1 ms (benchmarks/bench_range_reads.py). A fetch that finds data returns at
# once whatever this is, so only a consumer at a partition's end asks more often.
_FETCH_WAIT_MAX_MS = "1"
# How long librdkafka waits before it fetches again for a partition whose queue of
# fetched messages was over its thresholds (`queued.min.messages`, 100 000): librdkafka's
# default, 1000 ms, left a read of a partition of more messages idle for most of a second
# each time the read drained the queue it had filled (a 200 000-message partition read in
# 1.3 s, 0.4-0.5 s at 10 ms). The queue's thresholds still bound what is held.
_FETCH_QUEUE_BACKOFF_MS = "10"
# A log that follows a topic (`ticdc-sink decode --follow`) waits at its end by design:
# librdkafka's default, so an idle follower does not ask the broker a thousand times a second.
_FOLLOW_FETCH_WAIT_MAX_MS = "500"

_NO_TIMESTAMP = confluent_kafka.TIMESTAMP_NOT_AVAILABLE
_new_tuple = tuple.__new__


class LibrdkafkaConsumer(Protocol):
    """What `TopicLog` uses of a librdkafka consumer (`confluent_kafka.Consumer`, or a
    unit test's fake given as `consumer_factory`)."""

    def assign(self, partitions: list[TopicPartition], /) -> None: ...

    def unassign(self) -> None: ...

    def poll(self, timeout: float, /) -> Message | None: ...

    def consume(self, num_messages: int, /, *, timeout: float) -> list[Message]: ...

    def get_watermark_offsets(
        self, partition: TopicPartition, /, *, timeout: float, cached: bool
    ) -> tuple[int, int]: ...

    def list_topics(self, topic: str | None, /, *, timeout: float) -> ClusterMetadata: ...

    def offsets_for_times(
        self, partitions: list[TopicPartition], /, *, timeout: float
    ) -> list[TopicPartition]: ...

    def close(self) -> None: ...


#: How a TopicLog makes its consumer from librdkafka settings.
ConsumerFactory: TypeAlias = Callable[[dict[str, Any]], LibrdkafkaConsumer]


class TopicLog:
    """The messages of one topic, read with a consumer made from the read options.

    Not thread-safe; close it (or use it as a context manager) to free the consumer.
    """

    def __init__(
        self,
        config: ReadConfig,
        consumer_factory: ConsumerFactory = confluent_kafka.Consumer,
        *,
        following: bool = False,
    ) -> None:
        """`following`: the log is for `follow`, which waits at the topic's end, not for
        reads of ranges, which move on from it.

        Raises:
            ConfigError: librdkafka refuses a `kafka.*` setting.
        """
        wait = _FOLLOW_FETCH_WAIT_MAX_MS if following else _FETCH_WAIT_MAX_MS
        settings: dict[str, Any] = {
            "group.id": "ticdc-sink-reader",
            "enable.auto.commit": "false",
            "fetch.wait.max.ms": wait,
            "fetch.queue.backoff.ms": _FETCH_QUEUE_BACKOFF_MS,
            "logger": LIBRDKAFKA_LOG,
        }
        settings.update(dict(config.client))
        settings["bootstrap.servers"] = config.bootstrap_servers
        # The reader's own (module docstring): partition ends are found by EOF events, and
        # an offset that is gone is an error, not a jump to the partition's end.
        settings["enable.partition.eof"] = "true"
        settings["auto.offset.reset"] = "error"
        self.config = config
        self._headers = config.include_headers
        self._consumer_factory = consumer_factory
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

    def fork(self) -> TopicLog:
        """A log of its own (a consumer of its own) with this one's settings: for a read
        that must run while one of this log's reads is under way (a consumer reads one
        assignment at a time). Close it when done."""
        return TopicLog(self.config, self._consumer_factory)

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
        offsets: the first message kept and the next offset to be written (read on past
        the brokers' reported end while messages are there: see `all_bounds`).

        Raises:
            DeliveryError: the brokers did not answer, or the topic does not exist.
        """
        topic = self.config.topic if topic is None else topic
        return {p: b for (_, p), b in self.all_bounds([topic]).items()}

    def all_bounds(self, topics: Collection[str]) -> dict[tuple[str, int], tuple[int, int]]:
        """`bounds` of every partition of `topics`, keyed by (topic, partition).

        The high offset is where the consumer finds each partition's end, at or past the
        one the brokers report (ListOffsets; Tansu's lags behind multi-record batches).

        Raises:
            DeliveryError: the brokers did not answer, or a topic does not exist.
        """
        timeout = self.config.broker_timeout_s
        reported: dict[tuple[str, int], tuple[int, int]] = {}
        for topic in topics:
            try:
                for p in _assigned(self.config, topic, self.partitions(topic=topic)):
                    reported[topic, p] = self._consumer.get_watermark_offsets(
                        TopicPartition(topic, p), timeout=timeout, cached=False
                    )
            except KafkaException as exc:
                raise self._unreachable(exc, topic) from exc
        ends = self._ends({key: high for key, (_, high) in reported.items()})
        return {key: (low, ends[key]) for key, (low, _) in reported.items()}

    def offsets_for_times(
        self, timestamps: Mapping[tuple[str, int], int]
    ) -> dict[tuple[str, int], int | None]:
        """The brokers' offsetsForTimes: for each (topic, partition), the first offset
        whose message timestamp is at or after the given one (milliseconds since the
        epoch); None where no message is (the partition's messages all come before it).

        Raises:
            DeliveryError: the brokers did not answer within broker-timeout-ms, or refused
                a partition.
        """
        if not timestamps:
            return {}
        asked = [TopicPartition(t, p, ts) for (t, p), ts in sorted(timestamps.items())]
        try:
            found = self._consumer.offsets_for_times(asked, timeout=self.config.broker_timeout_s)
        except KafkaException as exc:
            raise self._unreachable(exc, asked[0].topic) from exc
        offsets: dict[tuple[str, int], int | None] = {}
        for tp in found:
            if tp.error is not None:
                raise self._unreachable(tp.error, tp.topic)
            offsets[tp.topic, tp.partition] = tp.offset if tp.offset >= 0 else None
        return offsets

    def _ends(self, reported: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Each partition's end: read from the reported end until the partition's EOF
        event (one fetch where the report is right), within broker-timeout-ms; a partition
        still receiving messages when it runs out ends after the last one read."""
        ends = dict(reported)
        waiting = set(ends)
        if not waiting:
            return ends
        consumer = self._consumer
        consumer.assign([TopicPartition(t, p, ends[t, p]) for t, p in sorted(waiting)])
        deadline = time.monotonic() + self.config.broker_timeout_s
        try:
            while waiting and (left := deadline - time.monotonic()) > 0:
                message = consumer.poll(min(left, _CONSUME_WAIT_S))
                if message is None:
                    continue
                key = (message.topic(), message.partition())
                error = message.error()
                if key not in ends:
                    continue
                offset = message.offset()
                if error is None:
                    assert offset is not None  # a fetched message has one
                    ends[key] = max(ends[key], offset + 1)
                elif error.code() == KafkaError._PARTITION_EOF:
                    assert offset is not None  # the partition's end
                    ends[key] = max(ends[key], offset)
                    waiting.discard(key)
                else:
                    raise self._unreachable(error, key[0])
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        finally:
            consumer.unassign()
        for key in sorted(k for k in ends if ends[k] > reported[k]):
            logger.info(
                "ticdc: partition %d of topic %s ends at offset %d, past the brokers' "
                "reported end %d",
                key[1],
                key[0],
                ends[key],
                reported[key],
            )
        return ends

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
    ) -> Generator[Record, None, None]:
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
                if error.code() == KafkaError._PARTITION_EOF:
                    continue
                raise self._unreachable(error)
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None  # a fetched message has both
            records.append(_record(message, partition, offset, self._headers))
        return records

    def read(self, offsets: OffsetRange) -> Generator[Record, None, None]:
        """The messages of `offsets` in offset order (offsets a compacted or transactional
        topic skips are simply absent; a range whose last offsets hold no message ends at
        the partition's end).

        Raises:
            DeliveryError: as `read_chunks`.
        """
        with contextlib.closing(self.read_chunks(offsets)) as chunks:
            for chunk in chunks:
                yield from chunk

    def read_chunks(self, offsets: OffsetRange) -> Generator[list[Record], None, None]:
        """The messages of `offsets` as `read` gives them, a list of those of one consume
        call at a time (none empty): a read's task hands a list to a column-wise run at
        once, instead of a message at a time.

        Raises:
            DeliveryError: a fetch fails; no message arrives within the poll timeout
                before the range's end (the message says where the partition ends); or
                the range's next offset is gone from the brokers and failOnDataLoss is
                true.
        """
        if offsets.empty:
            return
        consumer = self._consumer
        headers = self._headers
        topic, partition = offsets.topic, offsets.partition
        consumer.assign([TopicPartition(topic, partition, offsets.start)])
        last = offsets.end - 1
        position = offsets.start
        broker_end: int | None = None  # the partition's end, when it was found before ours
        waited_since = time.monotonic()
        try:
            while position <= last:
                wanted = min(_CONSUME_BATCH, last - position + 1)
                moved = lost = False
                failed: DeliveryError | None = None
                chunk: list[Record] = []
                for message in consumer.consume(wanted, timeout=_CONSUME_WAIT_S):
                    if message.partition() != partition or message.topic() != topic:
                        continue  # an event of an earlier assignment
                    error = message.error()
                    if error is not None and error.code() == KafkaError._PARTITION_EOF:
                        end = message.offset()
                        assert end is not None  # the partition's end
                        if end > last:  # read to the end: the rest are gaps
                            position = end
                            break
                        broker_end = end
                        continue
                    if error is not None and error.code() == KafkaError._AUTO_OFFSET_RESET:
                        lost = moved = True
                        break
                    if error is not None:
                        failed = self._unreachable(error, topic)
                        break
                    moved = True
                    offset = message.offset()
                    assert offset is not None  # a fetched message has one
                    if offset > last:
                        position = offset
                        break
                    position = offset + 1
                    chunk.append(_record(message, partition, offset, headers))
                if chunk:  # the messages before an error are read before it is raised
                    yield chunk
                if failed is not None:
                    raise failed
                if lost:
                    position = self._skip_lost(offsets, position)
                if moved:
                    waited_since = time.monotonic()
                elif time.monotonic() - waited_since >= self.config.poll_timeout_s:
                    raise self._stalled(offsets, position, broker_end)
        except KafkaException as exc:
            raise self._unreachable(exc, topic) from exc
        finally:
            consumer.unassign()

    def _stalled(
        self, offsets: OffsetRange, position: int, broker_end: int | None
    ) -> DeliveryError:
        brokers = self.config.bootstrap_servers
        wait = f"{self.config.poll_timeout_s:g} s"
        where = f"partition {offsets.partition} of topic {offsets.topic}"
        if broker_end is not None:
            message = (
                f"{where} ends at offset {broker_end} on Kafka brokers {brokers}, and no "
                f"message came within {wait} to reach offset {offsets.end}, where the read "
                "ends; give an endingOffsets the partition holds, or raise option "
                "kafkaConsumer.pollTimeoutMs to wait longer for the writer"
            )
        else:
            message = (
                f"no message arrived from offset {position} of {where} on Kafka brokers "
                f"{brokers} within {wait}, though the read ends at offset {offsets.end}; "
                "check that the brokers are up, or raise option kafkaConsumer.pollTimeoutMs "
                "if they are slow"
            )
        return DeliveryError(message, brokers=brokers)

    def _skip_lost(self, offsets: OffsetRange, position: int) -> int:
        """The range's next offset is out of the partition's range on the brokers: its
        messages were deleted (retention), or the topic was recreated. Fail, or with
        failOnDataLoss=false read on from the first offset kept.

        Raises:
            DeliveryError: failOnDataLoss is true, or the offset is past the partition's
                end (nothing to read on from).
        """
        topic, partition = offsets.topic, offsets.partition
        low, high = self._consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=self.config.broker_timeout_s, cached=False
        )
        where = f"partition {partition} of topic {topic}"
        brokers = self.config.bootstrap_servers
        if position >= low:
            raise DeliveryError(
                f"offset {position} of {where} is out of its range on Kafka brokers {brokers}, "
                f"which hold offsets {low}..{high - 1}: the topic was deleted and recreated, or "
                "its log truncated, since the read was planned; read it again",
                brokers=brokers,
            )
        if self.config.fail_on_data_loss:
            raise DeliveryError(
                f"offsets {position}..{low - 1} of {where} are no longer on Kafka brokers "
                f"{brokers} (the partition begins at offset {low}: its messages were deleted "
                "before they were read); set option failOnDataLoss=false to read on from the "
                "first offset kept",
                brokers=brokers,
            )
        logger.warning(
            "ticdc: offsets %d..%d of %s are no longer on the brokers (failOnDataLoss=false): "
            "reading on from offset %d",
            position,
            low - 1,
            where,
            low,
        )
        self._consumer.assign([TopicPartition(topic, partition, low)])
        return low

    def _metadata(self, topic: str | None) -> Any:
        """The brokers' metadata of `topic` (of every topic when None).

        Raises:
            DeliveryError: the brokers did not answer within broker-timeout-ms.
        """
        timeout = self.config.broker_timeout_s
        try:
            return self._consumer.list_topics(topic, timeout=timeout)
        except KafkaException as exc:
            purpose = "list their topics" if topic is None else f"read topic {topic}"
            raise DeliveryError(
                f"cannot reach Kafka brokers {self.config.bootstrap_servers} within "
                f"{timeout:g} s (option broker-timeout-ms) to {purpose}: {_describe(exc)}; "
                "check kafka.bootstrap.servers and that the brokers are up",
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


def _record(message: Message, partition: int, offset: int, headers: bool = False) -> Record:
    """`message` (of `partition`, at `offset`: its caller asked them already) as a Record;
    its headers only when asked for (`includeHeaders`): parsing them costs every message
    of a read."""
    kind, timestamp = message.timestamp()
    found = message.headers() if headers else None
    # The tuple of a Record's fields made a Record as NamedTuple's own __new__ makes it,
    # without that Python-level call: a third of a microsecond a message.
    return _new_tuple(
        Record,
        (
            partition,
            offset,
            message.key(),
            message.value(),
            timestamp if kind != _NO_TIMESTAMP else None,
            _headers(found) if found else None,
        ),
    )


def _headers(found: Any) -> tuple[tuple[str, bytes | None], ...]:
    """A consumed message's headers as (key, value bytes) pairs in order (librdkafka
    gives a list of pairs; its type also allows a mapping and text values)."""
    pairs = found.items() if isinstance(found, dict) else found
    return tuple((str(k), v.encode() if isinstance(v, str) else v) for k, v in pairs)


def _assigned(config: ReadConfig, topic: str, present: list[int]) -> list[int]:
    """The partitions of `topic` a read reads: those option `assign` names (every one,
    without it).

    Raises:
        ConfigError: `assign` names a partition the topic does not have.
    """
    if not config.assign:
        return present
    wanted = sorted(p for t, p in config.assign if t == topic)
    missing = sorted(set(wanted) - set(present))
    if missing:
        raise ConfigError(
            f"option assign names partition {missing[0]} of topic {topic}, which has "
            f"partitions {_ranges(present)}; assign only partitions the topic has",
            option="assign",
            value=str(missing[0]),
            allowed=tuple(str(p) for p in present),
        )
    return wanted


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
