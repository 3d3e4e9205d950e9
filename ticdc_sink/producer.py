"""The Kafka producer one write task uses: sending, delivery tracking, and the errors a
task fails with.

`KafkaProducer` wraps one `confluent_kafka.Producer` (librdkafka) and adds what the sink
promises (design §5, §6): every message is acknowledged before a task returns, or the task
fails with a `DeliveryError` that carries the broker's error, the brokers and the topic;
memory stays bounded because librdkafka's queue is bounded and a full queue makes `send`
wait (serving delivery reports) instead of buffering in Python; reaching the broker is
bounded by `broker_timeout_ms`. Topic metadata (partition counts, creating a missing topic,
`max.message.bytes`, `min.insync.replicas`) is its `kafka_topics.TopicAdmin`'s; the
producer keeps its record batches within a topic's `max.message.bytes` and explains a
failed delivery with what the topic enforces. The settings it is made with are
`kafka_settings`'; what every librdkafka client shares (log lines, error words) is
`kafka_client`'s. `Record` is one message read back; reading is
`ticdc_sink.read.consumer`'s.

It knows nothing of protocols, Spark or rows: it moves bytes to (topic, partition). Objects
are per task and single-threaded (librdkafka's own threads only run the callbacks from
inside `poll`/`flush`, on the calling thread; a callback never raises, it leaves its error
for `poll`/`flush` to raise). The librdkafka factories are parameters, so unit tests pass
fakes instead of patching this module; `LibrdkafkaProducer` and
`kafka_topics.LibrdkafkaAdmin` say what a fake needs, as `Producer` says what the writer
needs of a `KafkaProducer`.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any, NamedTuple, Protocol, TypeAlias

import confluent_kafka
import numpy as np
from confluent_kafka import KafkaError, KafkaException, Message
from confluent_kafka.admin import AdminClient, ClusterMetadata

from ticdc_sink.config import KafkaConfig, acks_all
from ticdc_sink.errors import DeliveryError
from ticdc_sink.kafka_client import LIBRDKAFKA_LOG, close_client, describe, remaining
from ticdc_sink.kafka_settings import admin_settings, message_timeout_ms, producer_settings
from ticdc_sink.kafka_topics import LibrdkafkaAdmin, TopicAdmin

__all__ = [
    "DeliveryCallback",
    "KafkaProducer",
    "LibrdkafkaProducer",
    "PartitionStats",
    "Producer",
    "ProducerFactory",
]

logger = logging.getLogger(__name__)

# librdkafka fails a message after message.timeout.ms (default 5 minutes); flush waits that
# long plus this grace, so every message has a delivery report or is counted undelivered.
_FLUSH_GRACE_S = 5.0
# How long one poll waits for delivery reports while the queue is full, and how often send()
# serves reports when it is not (keeps callbacks from piling up between flushes).
_BACKPRESSURE_POLL_S = 0.1
_POLL_EVERY = 1024
# How long the look-up that explains a failed delivery may wait for the brokers.
_DIAGNOSIS_S = 3.0
# librdkafka's default `batch.size`: the most bytes of messages it puts in one record batch.
_LIBRDKAFKA_BATCH_SIZE = 1_000_000
# librdkafka's default `message.max.bytes`: the largest message it hands to a broker.
_LIBRDKAFKA_MESSAGE_MAX_BYTES = 1_000_000
# How long one librdkafka flush() waits before `flush` looks at the delivery reports
# again: the first failed message fails the task then, instead of after every other
# message has also run into its timeout.
_FLUSH_SLICE_S = 0.5


class PartitionStats(NamedTuple):
    """Messages acknowledged by the broker for one (topic, partition), and their key plus
    value bytes."""

    messages: int
    bytes: int


class Producer(Protocol):
    """What a write task and the driver's commit step send through: `KafkaProducer`, or
    a test's fake (tests/support/fake_producer.py). See `KafkaProducer` for each method."""

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]: ...

    def partition_count(self, topic: str) -> int: ...

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]: ...

    def topic_max_message_bytes(self, topic: str) -> int | None: ...

    def topics_max_message_bytes(self, topics: Iterable[str]) -> dict[str, int | None]: ...

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None: ...

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[bytes | None],
        *,
        keys: list[bytes | None] | None = None,
    ) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


#: How the writer makes its producers: `KafkaProducer`, or a test's fake.
ProducerFactory: TypeAlias = Callable[[KafkaConfig], Producer]

#: librdkafka's delivery report: the error (None: delivered) and the message.
DeliveryCallback: TypeAlias = Callable[[KafkaError | None, Message], None]


class LibrdkafkaProducer(Protocol):
    """What `KafkaProducer` uses of a librdkafka producer (`confluent_kafka.Producer`,
    or a unit test's fake given as `factory`). `produce` takes its arguments by position:
    keywords cost time per message, and the fifth is the delivery callback (named
    `callback`, alias `on_delivery`). `close` exists from confluent-kafka 2.13 on only, so
    it is looked up when needed."""

    def produce(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        partition: int,
        on_delivery: DeliveryCallback,
        /,
    ) -> None: ...

    def poll(self, timeout: float, /) -> int: ...

    def flush(self, timeout: float, /) -> int: ...

    def purge(self) -> None: ...

    def list_topics(self, topic: str | None, /, *, timeout: float) -> ClusterMetadata: ...

    def __len__(self) -> int: ...


class _Failure(NamedTuple):
    topic: str
    partition: int
    error: KafkaError
    size: int  # the message's key and value bytes


class KafkaProducer:
    """One librdkafka producer for one write task, with delivery tracking.

    Use: `partition_count(topic)` before routing to a topic, `send(...)` per message,
    `flush()` once at the end (it raises unless every message was acknowledged), read
    `delivered` for the commit message, `close()` always (also a context manager).

    `factory` and `admin_factory` build the librdkafka clients from a config dict
    (defaults: `confluent_kafka.Producer` and `confluent_kafka.admin.AdminClient`);
    `flush_timeout_s` overrides how long `flush` waits (default: the producer's
    `message.timeout.ms` plus a few seconds). The admin client is made only when a topic
    has to be created.
    """

    def __init__(
        self,
        config: KafkaConfig,
        *,
        factory: Callable[[dict[str, Any]], LibrdkafkaProducer] = confluent_kafka.Producer,
        admin_factory: Callable[[dict[str, Any]], LibrdkafkaAdmin] = AdminClient,
        flush_timeout_s: float | None = None,
    ) -> None:
        self._brokers = config.bootstrap_servers
        self._broker_timeout_s = config.broker_timeout_ms / 1000.0
        client_config = producer_settings(config)
        if flush_timeout_s is None:
            flush_timeout_s = message_timeout_ms(client_config) / 1000.0 + _FLUSH_GRACE_S
        self._flush_timeout_s = flush_timeout_s
        self._acks_all = acks_all(client_config)
        self._admin_config = admin_settings(client_config)
        self._topics = TopicAdmin(
            config,
            metadata=self._client,
            admin_factory=admin_factory,
            admin_config=self._admin_config,
            acks_all=self._acks_all,
        )
        self._batch_size = int(client_config.get("batch.size", _LIBRDKAFKA_BATCH_SIZE))
        self._stats: dict[tuple[str, int], list[int]] = {}
        self._sent = 0
        self._failed = 0
        self._first_failure: _Failure | None = None
        self._fatal: KafkaError | None = None
        self._last_error: KafkaError | None = None
        # An exception raised while handling a callback: kept, and raised once `poll` or
        # `flush` has returned (see `_on_delivery`).
        self._callback_error: BaseException | None = None
        self._closed = False
        client_config["error_cb"] = self._on_error
        client_config["logger"] = LIBRDKAFKA_LOG
        self._factory = factory
        self._client_config = client_config
        self._producer = factory(client_config)

    # -- metadata ---------------------------------------------------------------------

    def _client(self) -> LibrdkafkaProducer:
        """The librdkafka producer now (`_fit_batches` may replace it): topic metadata is
        read through its connections."""
        return self._producer

    def partition_count(self, topic: str) -> int:
        """The number of partitions to route `topic`'s messages over, creating the topic
        when it does not exist (`TopicAdmin.partition_count`). Cached per producer.

        Raises:
            DeliveryError, ConfigError: as `TopicAdmin.partition_count`.
        """
        count = self._topics.known_partition_count(topic)
        if count is not None:
            return count
        return self.partition_counts([topic])[topic]

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        """`partition_count` of many topics at once, in a few round trips
        (`TopicAdmin.partition_counts`); record batches then fit every topic's
        `max.message.bytes`.

        Raises:
            DeliveryError, ConfigError: as `partition_count` (naming the first topic).
        """
        counts = self._topics.partition_counts(topics)
        self._fit_batches(list(counts))
        return counts

    def topic_max_message_bytes(self, topic: str) -> int | None:
        """The topic's `max.message.bytes` as the brokers report it, or None
        (`TopicAdmin.topic_max_message_bytes`)."""
        return self._topics.topic_max_message_bytes(topic)

    def topics_max_message_bytes(self, topics: Iterable[str]) -> dict[str, int | None]:
        """`topic_max_message_bytes` of many topics, in one DescribeConfigs request for
        those not asked yet."""
        return self._topics.topics_max_message_bytes(topics)

    def _fit_batches(self, topics: list[str]) -> None:
        """Keep librdkafka's record batches within the topics' `max.message.bytes`.

        Kafka checks that limit against a whole record batch, and librdkafka fills a
        batch up to `batch.size` (1,000,000) and does not split one the broker refuses:
        200 messages of 900 bytes to a topic of max.message.bytes 10000 all failed with
        MSG_SIZE_TOO_LARGE, each far below the limit. (TiCDC's sarama producer caps its
        batches at max-message-bytes.) So a topic whose limit is below the batch size
        makes this producer start again with batches that fit: messages sent so far are
        flushed first, then a new librdkafka producer takes over (a new producer id;
        order per partition holds, since the old one had delivered everything).

        Raises:
            DeliveryError: flushing what was sent before failed.
        """
        limits = [(self._topics.known_max_message_bytes(t), t) for t in topics]
        known = [(limit, topic) for limit, topic in limits if limit is not None]
        if not known:
            return
        limit, topic = min(known)
        size = _batch_size_within(limit)
        if size >= self._batch_size:
            return
        if self._sent:
            self.flush()
        old = self._producer
        self._client_config["batch.size"] = size
        self._producer = self._factory(dict(self._client_config))
        self._batch_size = size
        close_client(old)
        logger.info(
            "topic %s on Kafka brokers %s has max.message.bytes %d: record batches of at "
            "most %d bytes (batch.size)",
            topic,
            self._brokers,
            limit,
            size,
        )

    # -- sending ----------------------------------------------------------------------

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        """Queue one message for (topic, partition); None is a null key or value.

        Returns once librdkafka holds the message. When its bounded queue is full, waits
        for acknowledgements to make room (back-pressure) instead of buffering.

        Raises:
            DeliveryError: an earlier message already failed (no point producing more), the
                queue stayed full for the whole flush timeout, or librdkafka refused the
                message (a partition the topic no longer has, a message above
                kafka.message.max.bytes).
        """
        if self._failed or self._fatal is not None:
            raise self._delivery_error(undelivered=0)
        try:
            self._producer.produce(topic, value, key, partition, self._on_delivery)
        except BufferError:
            self._send_when_room(topic, partition, key, value)
        except KafkaException as exc:
            raise self._refused(exc, topic, partition, key, value) from None
        self._count(topic, partition, 1, (len(key) if key else 0) + (len(value) if value else 0))
        self._sent += 1
        if self._sent % _POLL_EVERY == 0:
            self._poll(0)

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[bytes | None],
        *,
        keys: list[bytes | None] | None = None,
    ) -> None:
        """`send` for many values of one topic, to one partition or, given a list, each
        to its own; with one key or, given `keys`, a key each: the same queueing,
        back-pressure and failure checks, in one tight loop (the writer sends a record
        batch's messages this way).

        Raises:
            DeliveryError: as `send`.
        """
        if self._failed or self._fatal is not None:
            raise self._delivery_error(undelivered=0)
        produce = self._producer.produce
        on_delivery = self._on_delivery
        sent = self._sent
        done = 0
        partitions = repeat(partition) if isinstance(partition, int) else partition
        key_list = keys if keys is not None else repeat(key)
        try:
            # Lists have one entry per value; repeat() is endless.
            for p, k, value in zip(partitions, key_list, values, strict=False):
                try:
                    produce(topic, value, k, p, on_delivery)
                except BufferError:
                    self._sent = sent
                    self._send_when_room(topic, p, k, value)
                except KafkaException as exc:
                    raise self._refused(exc, topic, p, k, value) from None
                sent += 1
                done += 1
                if not sent % _POLL_EVERY:
                    self._sent = sent
                    self._poll(0)
                    if self._failed or self._fatal is not None:
                        raise self._delivery_error(undelivered=0)
        finally:
            self._sent = sent
            self._count_many(topic, partition, key, keys, values, done)

    def _count_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        done: int,
    ) -> None:
        """Count the first `done` messages of a `send_many`."""
        if isinstance(partition, int):
            sizes = sum(map(len, filter(None, values[:done])))
            if keys is not None:
                sizes += sum(map(len, filter(None, keys[:done])))
            elif key:
                sizes += len(key) * done
            self._count(topic, partition, done, sizes)
            return
        if not done:
            return
        where = np.asarray(partition[:done], np.int64)
        size = np.fromiter((len(v) if v else 0 for v in values[:done]), np.int64, done)
        if keys is not None:
            size += np.fromiter((len(k) if k else 0 for k in keys[:done]), np.int64, done)
        elif key:
            size += len(key)
        messages = np.bincount(where)
        totals = np.bincount(where, weights=size)
        for p in np.flatnonzero(messages).tolist():
            self._count(topic, p, int(messages[p]), int(totals[p]))

    def _send_when_room(
        self, topic: str, partition: int, key: bytes | None, value: bytes | None
    ) -> None:
        deadline = time.monotonic() + self._flush_timeout_s
        while True:
            # Serving delivery reports frees queue slots: librdkafka counts a message
            # against queue.buffering.max.* until its report has been served.
            self._poll(_BACKPRESSURE_POLL_S)
            if self._failed or self._fatal is not None:
                raise self._delivery_error(undelivered=0)
            try:
                self._producer.produce(topic, value, key, partition, self._on_delivery)
                return
            except KafkaException as exc:
                raise self._refused(exc, topic, partition, key, value) from None
            except BufferError:
                if time.monotonic() >= deadline:
                    raise self._delivery_error(
                        undelivered=len(self._producer), waited_s=self._flush_timeout_s
                    ) from None

    def flush(self) -> None:
        """Wait until every message sent so far is acknowledged.

        Stops at the first failed message (the task fails anyway: waiting for the others
        to run into their own timeouts would only delay that; `close` drops what is still
        queued); otherwise waits up to the flush timeout.

        Raises:
            DeliveryError: a message failed (the first broker error is quoted), or some were
                still undelivered when the flush timeout ran out.
        """
        deadline = time.monotonic() + self._flush_timeout_s
        while True:
            undelivered = self._producer.flush(min(_FLUSH_SLICE_S, remaining(deadline)))
            self._raise_callback_error()
            if self._failed or self._fatal is not None:
                raise self._delivery_error(undelivered=undelivered)
            if not undelivered:
                break
            if time.monotonic() >= deadline:
                raise self._delivery_error(undelivered=undelivered, waited_s=self._flush_timeout_s)
        logger.debug("flushed %d messages", self._sent)

    def _poll(self, timeout: float) -> None:
        self._producer.poll(timeout)
        self._raise_callback_error()

    def _raise_callback_error(self) -> None:
        """Raise what a callback could not (see `_on_delivery`): a DeliveryError for an
        error, anything else (KeyboardInterrupt) as it is."""
        error = self._callback_error
        if error is None:
            return
        self._callback_error = None
        if not isinstance(error, Exception):
            raise error
        raise DeliveryError(
            f"handling a delivery report from Kafka brokers {self._brokers} for topics "
            f"{self._topics_text()} failed: {type(error).__name__}: {error}",
            brokers=self._brokers,
        ) from error

    def close(self) -> None:
        """Release the clients. Messages not yet acknowledged are dropped (call `flush`
        first to deliver them); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        producer = self._producer
        if len(producer):
            # An aborted task: drop what is queued instead of blocking in close().
            producer.purge()
            producer.poll(0)
        close_client(producer)
        self._topics.close()

    def __enter__(self) -> KafkaProducer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- accounting -------------------------------------------------------------------

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]:
        """Acknowledged messages and bytes per (topic, partition), for the commit message.
        Exact after a successful `flush`; before it, messages still in flight count too."""
        return {
            key: PartitionStats(*counts) for key, counts in self._stats.items() if counts[0] > 0
        }

    @property
    def flush_timeout_s(self) -> float:
        """How long `flush` waits at most: message.timeout.ms (librdkafka's default 5
        minutes) plus a few seconds, so every message has its report by then; or the
        `flush_timeout_s` given."""
        return self._flush_timeout_s

    @property
    def sent(self) -> int:
        """Messages handed to librdkafka so far."""
        return self._sent

    def _count(self, topic: str, partition: int, messages: int, size: int) -> None:
        counts = self._stats.get((topic, partition))
        if counts is None:
            counts = self._stats[(topic, partition)] = [0, 0]
        counts[0] += messages
        counts[1] += size

    def _on_delivery(self, error: KafkaError | None, message: Message) -> None:
        # Counted when sent; only a failure changes the counts (see _PRODUCER_DEFAULTS).
        # An exception must not leave a callback: confluent-kafka then calls the next
        # delivery callback of the same batch with the exception still set, and that one
        # fails with a SystemError. It is kept and raised after poll/flush returns.
        if error is None:
            return
        try:
            self._failed += 1
            topic, partition = message.topic(), message.partition()
            assert topic is not None and partition is not None  # a delivery report names them
            key = message.key()
            size = len(message) + (len(key) if key is not None else 0)
            if self._first_failure is None:
                self._first_failure = _Failure(topic, partition, error, size)
            self._count(topic, partition, -1, -size)
        except BaseException as exc:  # noqa: B036 (kept and raised after the callback)
            if self._callback_error is None:
                self._callback_error = exc

    def _on_error(self, error: KafkaError) -> None:
        # librdkafka reports connection trouble here and keeps retrying on its own; only a
        # fatal error (e.g. the idempotent producer's sequence broke) ends the producer.
        try:
            if error.fatal():
                self._fatal = error
            self._last_error = error
            logger.debug("Kafka client error: %s", error)
        except BaseException as exc:  # noqa: B036 (see _on_delivery)
            if self._callback_error is None:
                self._callback_error = exc

    def _topics_text(self) -> str:
        return ", ".join(sorted({topic for topic, _ in self._stats})) or "(none yet)"

    def _refused(
        self,
        exc: KafkaException,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
    ) -> DeliveryError:
        """librdkafka refused to queue a message (`produce` raised)."""
        error = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        code = error.code() if error is not None else None
        if code == KafkaError._UNKNOWN_PARTITION:
            known = self._topics.known_partition_count(topic)
            had = f" (it had {known} when this task started)" if known is not None else ""
            message = (
                f"topic {topic} on Kafka brokers {self._brokers} has no partition "
                f"{partition} now{had}: it was recreated or changed while the task wrote; "
                "the task fails, and a retry routes by the topic's partition count then"
            )
        elif code == KafkaError.MSG_SIZE_TOO_LARGE:
            size = (len(key) if key else 0) + (len(value) if value else 0)
            limit = self._client_config.get("message.max.bytes", _LIBRDKAFKA_MESSAGE_MAX_BYTES)
            message = (
                f"a message of {size} bytes for topic {topic} partition {partition} on Kafka "
                f"brokers {self._brokers} is above the producer's kafka.message.max.bytes "
                f"{limit}; raise it, or lower max-message-bytes so that the sink handles such "
                "messages (large-message-handle-option)"
            )
        else:
            message = (
                f"the Kafka producer for brokers {self._brokers} refused a message for topic "
                f"{topic} partition {partition}: {describe(exc)}"
            )
        return DeliveryError(message, brokers=self._brokers)

    def _failure_reason(self, failure: _Failure) -> str | None:
        """What a failed delivery means and what to change, where the broker's error
        alone does not say: a message (or its record batch) above the topic's
        max.message.bytes, or acks=all writes to a partition short of in-sync replicas
        (Kafka answers NOT_ENOUGH_REPLICAS, which librdkafka retries until
        message.timeout.ms, then reports as a timeout). Reads the topic's configs and
        metadata again (bounded by broker-timeout-ms): the task fails anyway."""
        code = failure.error.code()
        topic = failure.topic
        if code == KafkaError.MSG_SIZE_TOO_LARGE:
            limit = None
            with contextlib.suppress(KafkaException, DeliveryError):  # only adds to a message
                limit = self._topics.topic_max_message_bytes(topic)
            known = (
                f"max.message.bytes is {limit}"
                if limit
                else "max.message.bytes (which the brokers do not report) is lower"
            )
            return (
                f"Kafka brokers {self._brokers} refused a message of {failure.size} bytes "
                f"(key and value) for topic {topic} partition {failure.partition} as too "
                f"large: the topic's {known} (a record batch of messages counts as one); "
                "raise the topic's max.message.bytes, or keep messages below it with "
                "max-message-bytes and large-message-handle-option"
            )
        if not self._acks_all or code not in _IN_SYNC_ERRORS:
            return None
        last = self._last_error
        if last is not None and last.code() == KafkaError._ALL_BROKERS_DOWN:
            return None  # the brokers are gone: nothing to ask, and no other story
        # Brief and silent: brokers that do not answer make the look-up wait.
        wait = min(self._broker_timeout_s, _DIAGNOSIS_S)
        return self._topics.recheck_in_sync(topic, wait)

    def _delivery_error(self, *, undelivered: int, waited_s: float | None = None) -> DeliveryError:
        brokers = self._brokers
        if self._fatal is not None:
            message = (
                f"the Kafka producer failed on brokers {brokers} writing topics "
                f"{self._topics_text()}: {describe(self._fatal)}; {self._failed} of "
                f"{self._sent} messages were not delivered"
            )
        elif self._first_failure is not None:
            failure = self._first_failure
            message = (
                f"{self._failed} of {self._sent} messages were not delivered to Kafka "
                f"brokers {brokers}; first failure: topic {failure.topic} partition "
                f"{failure.partition}: {describe(failure.error)}"
            )
            reason = self._failure_reason(failure)
            if reason:
                message = f"{reason}; {message}"
            if undelivered:
                message += f"; {undelivered} more were still unacknowledged"
        else:
            message = (
                f"{undelivered} of {self._sent} messages to topics {self._topics_text()} were "
                f"not acknowledged by Kafka brokers {brokers} within {waited_s:g} s"
            )
            if self._last_error is not None:
                message += f"; last client error: {describe(self._last_error)}"
            message += "; check that the brokers are reachable or raise kafka.message.timeout.ms"
        return DeliveryError(message, brokers=brokers)


# Delivery errors behind which a partition short of in-sync replicas can hide: Kafka's
# Delivery errors behind which a partition short of in-sync replicas can hide: Kafka's
# own answers, and librdkafka's timeout after retrying them.
_IN_SYNC_ERRORS = frozenset(
    {
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError._MSG_TIMED_OUT,
        KafkaError.REQUEST_TIMED_OUT,
    }
)


def _batch_size_within(limit: int) -> int:
    """The `batch.size` whose record batches stay within a topic's `max.message.bytes`:
    room for the batch's framing (TiCDC keeps 128 bytes below the limit), and for
    compression, which can make incompressible data a little larger (lz4 by 0.4%)."""
    return max(1, limit - 128 - limit // 100)
