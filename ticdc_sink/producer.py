"""The Kafka producer one write task uses: topic metadata, sending, delivery tracking.

`KafkaProducer` wraps one `confluent_kafka.Producer` (librdkafka) and adds what the sink
promises (design §5, §6): every message is acknowledged before a task returns, or the task
fails with a `DeliveryError` that carries the broker's error, the brokers and the topic;
memory stays bounded because librdkafka's queue is bounded and a full queue makes `send`
wait (serving delivery reports) instead of buffering in Python; reaching the broker is
bounded by `broker_timeout_ms`. It also owns topic metadata: the partition count of a topic,
creating a missing topic with `partition-num` and applying TiCDC's partition-num rule to an
existing one, as TiCDC's topic manager does; and, with it, what Kafka enforces on writes
there: `max.message.bytes` (record batches are kept within it) and `min.insync.replicas`
(acks=all to a partition short of in-sync replicas fails before sending).
`check_client_config` has librdkafka check the `kafka.*` settings without connecting (the
driver, `ticdc-sink check`). `Record` is one message read back; reading is
`ticdc_sink.read.consumer`'s. librdkafka's log lines go through Python logging
(`ticdc_sink.librdkafka`).

It knows nothing of protocols, Spark or rows: it moves bytes to (topic, partition). Objects
are per task and single-threaded (librdkafka's own threads only run the callbacks from
inside `poll`/`flush`, on the calling thread; a callback never raises, it leaves its error
for `poll`/`flush` to raise). The librdkafka factories are parameters, so unit tests pass
fakes instead of patching this module; `LibrdkafkaProducer` and `LibrdkafkaAdmin` say what
a fake needs, as `Producer` says what the writer needs of a `KafkaProducer`.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from itertools import repeat
from typing import Any, NamedTuple, Protocol, TypeAlias

import confluent_kafka
import numpy as np
from confluent_kafka import KafkaError, KafkaException, Message
from confluent_kafka.admin import (
    AdminClient,
    ClusterMetadata,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from ticdc_sink.config import KafkaConfig, acks_all
from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.redaction import is_secret

__all__ = [
    "DEFAULT_PARTITION_NUM",
    "LIBRDKAFKA_LOG",
    "DeliveryCallback",
    "KafkaProducer",
    "LibrdkafkaAdmin",
    "LibrdkafkaLog",
    "LibrdkafkaProducer",
    "PartitionStats",
    "Producer",
    "ProducerFactory",
    "check_client_config",
    "producer_settings",
]

logger = logging.getLogger(__name__)

#: Partitions of a topic the sink creates when `partition-num` is not set; TiCDC's default
#: (tiflow pkg/sink/kafka/options.go, defaultPartitionNum).
DEFAULT_PARTITION_NUM = 3

# Defaults the producer applies under the user's settings (`kafka.*` options win).
# - allow.auto.create.topics: librdkafka's producer default (true) lets a metadata request
#   create a missing topic with the broker's default partition count; the sink creates
#   topics itself with partition-num, as TiCDC does (it never relies on broker auto-create).
# - queue.buffering.max.kbytes: librdkafka's default is 1 GiB per producer; a Spark executor
#   runs several tasks, so bound each queue at 64 MiB (Spark's Kafka sink: 32 MiB
#   buffer.memory). Throughput does not need more: batches are at most 1 MiB.
# - delivery.report.only.error: a delivery report per acknowledged message costs a Python
#   callback (~3 us, as much as producing it); counts are kept when sending instead, and a
#   failed message's report takes it back out. After a flush that leaves nothing queued and
#   saw no failure, every message sent was acknowledged, so the counts are exact then.
_PRODUCER_DEFAULTS: dict[str, Any] = {
    "allow.auto.create.topics": "false",
    "queue.buffering.max.kbytes": "65536",
    "delivery.report.only.error": True,
}

# Settings that only mean something for the producer; the admin client (topic creation)
# must not start an idempotent or transactional producer of its own.
_PRODUCER_ONLY = frozenset(
    {
        "acks",
        "enable.idempotence",
        "request.required.acks",
        "transactional.id",
        "transaction.timeout.ms",
        "enable.gapless.guarantee",
    }
)

# librdkafka fails a message after message.timeout.ms (default 5 minutes); flush waits that
# long plus this grace, so every message has a delivery report or is counted undelivered.
_DEFAULT_MESSAGE_TIMEOUT_MS = 300_000
_FLUSH_GRACE_S = 5.0
# How long one poll waits for delivery reports while the queue is full, and how often send()
# serves reports when it is not (keeps callbacks from piling up between flushes).
_BACKPRESSURE_POLL_S = 0.1
_POLL_EVERY = 1024
# Pause between metadata reads while waiting for a created topic to become visible.
_METADATA_RETRY_S = 0.05
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


class LibrdkafkaLog:
    """librdkafka's log lines through Python logging (confluent-kafka's `logger`
    setting), on the logger `ticdc_sink.librdkafka`, instead of librdkafka's own lines on
    stderr (an unreachable broker printed 118 `%3|...|FAIL|` lines before the task failed).

    Levels: what librdkafka logs as an error or a warning it retries on its own (a refused
    connection, a broker going away: once a second per broker during an outage), and the
    sink reports what stays wrong as one DeliveryError, so those lines are INFO; its
    configuration warnings (CONFWARN, e.g. a consumer setting given to the producer) stay
    WARNING; the rest is DEBUG. Served from `poll`/`flush` on the calling thread.
    """

    def __init__(self) -> None:
        self.logger = logging.getLogger("ticdc_sink.librdkafka")

    def log(self, level: int, fmt: str, *args: Any) -> None:
        if level >= logging.WARNING:
            level = logging.WARNING if args and args[0] == "CONFWARN" else logging.INFO
        else:
            level = logging.DEBUG
        self.logger.log(level, fmt, *args)


#: The one librdkafka log adapter every client (producers, admin, the reader's consumer)
#: is given as its `logger` setting.
LIBRDKAFKA_LOG = LibrdkafkaLog()


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


class LibrdkafkaAdmin(Protocol):
    """What `KafkaProducer` uses of librdkafka's admin client (`AdminClient`, or a unit
    test's fake given as `admin_factory`)."""

    def create_topics(
        self, new_topics: list[NewTopic], *, request_timeout: float, operation_timeout: float
    ) -> dict[str, Future[None]]: ...

    def describe_configs(
        self, resources: list[ConfigResource], *, request_timeout: float
    ) -> dict[ConfigResource, Future[dict[str, ConfigEntry]]]: ...


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
        self._config = config
        self._brokers = config.bootstrap_servers
        self._broker_timeout_s = config.broker_timeout_ms / 1000.0
        client_config = producer_settings(config)
        self._admin_config = {
            key: value for key, value in client_config.items() if key not in _PRODUCER_ONLY
        }
        self._admin_config["allow.auto.create.topics"] = "false"
        self._admin_config["logger"] = LIBRDKAFKA_LOG
        if flush_timeout_s is None:
            flush_timeout_s = _message_timeout_ms(client_config) / 1000.0 + _FLUSH_GRACE_S
        self._flush_timeout_s = flush_timeout_s
        self._admin_factory = admin_factory
        self._admin: LibrdkafkaAdmin | None = None
        self._partitions: dict[str, int] = {}
        self._max_message_bytes: dict[str, int | None] = {}
        self._min_insync_replicas: dict[str, int | None] = {}
        # Per topic and partition: (in-sync replicas, replicas), from the last metadata.
        self._replicas: dict[str, dict[int, tuple[int, int]]] = {}
        self._acks_all = acks_all(client_config)
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

    def partition_count(self, topic: str) -> int:
        """The number of partitions to route `topic`'s messages over, creating the topic
        when it does not exist.

        A missing topic is created with partition-num (default 3) and replication-factor,
        unless auto-create-topic is false; another task creating the same topic at the same
        time is fine. An existing topic's own count is used, except for the default topic
        (`KafkaConfig.default_topic`) with partition-num set, which follows TiCDC: a
        smaller partition-num is used, a larger one is an error. Cached per producer.

        Raises:
            DeliveryError: the brokers did not answer within broker-timeout-ms, refused to
                create the topic, or the topic is missing and auto-create-topic is false.
            ConfigError: partition-num is larger than the default topic's partition count.
        """
        count = self._partitions.get(topic)
        if count is not None:
            return count
        return self.partition_counts([topic])[topic]

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        """`partition_count` of many topics at once: one metadata request for those not
        cached yet, one CreateTopics request for the missing ones, one wait until they
        show; so a watermark or bootstrap fan-out over thousands of topics costs a few
        round trips, not a few per topic.

        Raises:
            DeliveryError, ConfigError: as `partition_count` (naming the first topic).
        """
        wanted = list(dict.fromkeys(topics))
        new = [topic for topic in wanted if topic not in self._partitions]
        if new:
            deadline = time.monotonic() + self._broker_timeout_s
            counts = self._read_partition_counts(new, deadline)
            missing = [topic for topic in new if counts.get(topic) is None]
            found = {topic: count for topic, count in counts.items() if count is not None}
            if missing:
                if not self._config.auto_create_topic:
                    # tiflow pkg/sink/kafka/options.go, AdjustOptions: a missing topic with
                    # auto-create-topic=false is an error.
                    raise DeliveryError(
                        f"topic {missing[0]} does not exist on Kafka brokers {self._brokers} "
                        "and auto-create-topic is false; create the topic or set "
                        "auto-create-topic=true",
                        brokers=self._brokers,
                    )
                found.update(self._create_topics(missing, deadline))
            for topic in new:
                count = self._governed_count(topic, found[topic])
                self._partitions[topic] = count
                logger.debug("topic %s has %d partitions", topic, count)
            # What Kafka enforces on writes to these topics, asked once with the counts.
            self._describe_topics(new)
            self._check_in_sync_replicas(new)
            self._fit_batches(new)
        return {topic: self._partitions[topic] for topic in wanted}

    def _read_partition_counts(self, topics: list[str], deadline: float) -> dict[str, int | None]:
        """The partition counts from the producer's metadata (one request: the topic's
        alone, or every topic's when there are several), None for a missing topic.

        A lost connection or a broker not ready yet (e.g. LEADER_NOT_AVAILABLE right after
        a topic was created) is retried until the deadline: one dropped connection must not
        fail a task that broker-timeout-ms allows to wait.
        """
        while True:
            try:
                metadata = self._producer.list_topics(
                    topics[0] if len(topics) == 1 else None, timeout=_remaining(deadline)
                )
            except KafkaException as exc:
                if _is_transient(exc) and _pause_before_retry(deadline):
                    continue
                raise DeliveryError(
                    f"cannot reach Kafka brokers {self._brokers} within broker-timeout-ms "
                    f"{self._config.broker_timeout_ms} to read metadata of topic {topics[0]}: "
                    f"{_describe(exc)}; check kafka.bootstrap.servers and that the brokers "
                    "are up",
                    brokers=self._brokers,
                ) from exc
            counts: dict[str, int | None] = {}
            retry = False
            for topic in topics:
                topic_metadata = metadata.topics.get(topic)
                error = None if topic_metadata is None else topic_metadata.error
                if topic_metadata is None or (
                    error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
                ):
                    counts[topic] = None
                elif error is None:
                    counts[topic] = len(topic_metadata.partitions) or None
                    self._replicas[topic] = _replica_counts(topic_metadata.partitions)
                elif _is_transient(error) and _pause_before_retry(deadline):
                    retry = True
                    break
                else:
                    raise DeliveryError(
                        f"Kafka brokers {self._brokers} returned an error for topic {topic}: "
                        f"{_describe(error)}",
                        brokers=self._brokers,
                    )
            if not retry:
                return counts

    def _governed_count(self, topic: str, count: int) -> int:
        """TiCDC's partition-num rule for the topic of the sink-uri (tiflow
        pkg/sink/kafka/options.go, `SetPartitionNum`, called by `AdjustOptions` when the
        topic exists; cdc/sink/dmlsink/mq/manager/kafka_manager.go uses the adjusted
        partition-num for that topic only): not set, the topic's count; smaller, messages go
        to the first partition-num partitions (TiCDC warns); larger, an error, since keys
        would be routed to partitions the topic does not have. Topics of expressions and
        dispatchers always use their own count."""
        wanted = self._config.partition_num
        if wanted is None or wanted == count or topic != self._config.default_topic:
            return count
        if wanted > count:
            raise ConfigError(
                f"option 'partition-num' is {wanted}, more than the {count} partitions of "
                f"topic {topic} on Kafka brokers {self._brokers}; TiCDC refuses this too: "
                f"set partition-num to at most {count}, or add partitions to the topic",
                option="partition-num",
                value=str(wanted),
            )
        _warn_fewer_partitions(self._brokers, topic, wanted, count)
        return wanted

    def _create_topics(self, topics: list[str], deadline: float) -> dict[str, int]:
        """Create `topics` in one request; the partition count of each once the brokers
        show it."""
        partitions = self._config.partition_num or DEFAULT_PARTITION_NUM
        replication = self._config.replication_factor
        if self._admin is None:
            self._admin = self._admin_factory(dict(self._admin_config))
        pending = list(topics)
        created: list[str] = []
        while pending:
            timeout = _remaining(deadline)
            futures = self._admin.create_topics(
                [
                    NewTopic(topic, num_partitions=partitions, replication_factor=replication)
                    for topic in pending
                ],
                request_timeout=timeout,
                operation_timeout=timeout,
            )
            retry: list[str] = []
            lost: KafkaException | None = None
            for topic in pending:
                try:
                    futures[topic].result(timeout=_remaining(deadline) + 1.0)
                    created.append(topic)
                except KafkaException as exc:
                    error = (
                        exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
                    )
                    if error is not None and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                        # Another task won the race (or a lost answer hid our own success):
                        # use the count the broker has.
                        continue
                    # A lost connection: ask again while broker-timeout-ms allows.
                    if not _is_transient(exc):
                        raise self._create_error(topic, exc) from exc
                    retry.append(topic)
                    lost = lost or exc
                except FutureTimeoutError as exc:
                    raise DeliveryError(
                        f"cannot create topic {topic} on Kafka brokers {self._brokers} within "
                        f"broker-timeout-ms {self._config.broker_timeout_ms}; check that the "
                        "brokers are up or create the topic beforehand",
                        brokers=self._brokers,
                    ) from exc
            if lost is not None and not _pause_before_retry(deadline):
                raise self._create_error(retry[0], lost) from lost
            pending = retry
        for topic in created:
            logger.info(
                "created topic %s with %d partitions, replication factor %d",
                topic,
                partitions,
                replication,
            )
        # Like TiCDC (tiflow pkg/sink/kafka topic manager, waitUntilTopicVisible), wait
        # until the new topics show in metadata, so the counts are the broker's.
        counts: dict[str, int] = {}
        waiting = list(topics)
        while waiting:
            found = self._read_partition_counts(waiting, deadline)
            for topic, count in found.items():
                if count is not None:
                    counts[topic] = count
            waiting = [topic for topic in waiting if topic not in counts]
            if not waiting or time.monotonic() >= deadline:
                break
            time.sleep(_METADATA_RETRY_S)
        for topic in waiting:
            if topic not in created:
                raise DeliveryError(
                    f"topic {topic} exists on Kafka brokers {self._brokers} but its metadata "
                    f"did not show within broker-timeout-ms {self._config.broker_timeout_ms}",
                    brokers=self._brokers,
                )
            counts[topic] = partitions
        return counts

    def _create_error(self, topic: str, exc: KafkaException) -> DeliveryError:
        partitions = self._config.partition_num or DEFAULT_PARTITION_NUM
        return DeliveryError(
            f"cannot create topic {topic} with partition-num {partitions} and "
            f"replication-factor {self._config.replication_factor} on Kafka brokers "
            f"{self._brokers}: {_describe(exc)}; create the topic beforehand or fix the options",
            brokers=self._brokers,
        )

    def topic_max_message_bytes(self, topic: str) -> int | None:
        """The topic's `max.message.bytes` as the brokers report it (DescribeConfigs),
        or None when they do not (Tansu reports no topic configs) or the request fails
        (e.g. no DescribeConfigs permission: a warning, the option's value then holds).
        Asked once per topic and producer, with its partition count; call it after
        `partition_count` has made sure the topic exists. TiCDC lowers max-message-bytes
        to this minus 128 (tiflow pkg/sink/kafka/options.go, adjustOptions)."""
        if topic not in self._max_message_bytes:
            self._describe_topics([topic])
        return self._max_message_bytes[topic]

    def topics_max_message_bytes(self, topics: Iterable[str]) -> dict[str, int | None]:
        """`topic_max_message_bytes` of many topics, in one DescribeConfigs request for
        those not asked yet."""
        wanted = list(dict.fromkeys(topics))
        self._describe_topics(wanted)
        return {topic: self._max_message_bytes[topic] for topic in wanted}

    def _describe_topics(
        self, topics: list[str], *, timeout: float | None = None, warn: bool = True
    ) -> None:
        """Read `max.message.bytes` and `min.insync.replicas` of the topics not asked yet,
        in one DescribeConfigs request, asked again after a lost connection until
        `timeout` (broker-timeout-ms) runs out. A topic without them is None; so is one
        whose request failed otherwise, with a warning (if `warn`)."""
        new = [topic for topic in topics if topic not in self._max_message_bytes]
        if not new:
            return
        if self._admin is None:
            self._admin = self._admin_factory(dict(self._admin_config))
        deadline = time.monotonic() + (self._broker_timeout_s if timeout is None else timeout)
        entries: dict[str, Any] = {}
        pending = new
        while pending:
            failed: dict[str, Exception] = {}
            try:
                futures = self._admin.describe_configs(
                    [ConfigResource(ResourceType.TOPIC, topic) for topic in pending],
                    request_timeout=_remaining(deadline),
                )
            except KafkaException as exc:
                futures, failed = {}, dict.fromkeys(pending, exc)
            for resource, future in futures.items():
                try:
                    entries[resource.name] = future.result(timeout=_remaining(deadline) + 1.0)
                except (KafkaException, FutureTimeoutError) as exc:
                    failed[resource.name] = exc
            lost = {t: e for t, e in failed.items() if isinstance(e, KafkaException)}
            if lost and all(_is_transient(e) for e in lost.values()):
                if _pause_before_retry(deadline):
                    pending = list(lost)
                    continue
            for topic, error in failed.items():
                if warn:
                    self._warn_no_max_message_bytes(topic, error)
            break
        for topic in new:
            found = entries.get(topic, {})
            try:
                limit = _int_entry(found, "max.message.bytes")
                in_sync = _int_entry(found, "min.insync.replicas")
            except (ValueError, TypeError) as exc:
                self._warn_no_max_message_bytes(topic, exc)
                limit = in_sync = None
            self._max_message_bytes[topic] = limit
            self._min_insync_replicas[topic] = in_sync
            logger.debug(
                "topic %s max.message.bytes: %s, min.insync.replicas: %s", topic, limit, in_sync
            )

    def _warn_no_max_message_bytes(self, topic: str, exc: Exception) -> None:
        logger.warning(
            "cannot read max.message.bytes of topic %s from Kafka brokers %s (%s); "
            "max-message-bytes is not lowered to it",
            topic,
            self._brokers,
            exc,
        )

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
        limits = [(self._max_message_bytes.get(t), t) for t in topics]
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
        close = getattr(old, "close", None)  # confluent-kafka >= 2.13
        if close is not None:
            close()
        logger.info(
            "topic %s on Kafka brokers %s has max.message.bytes %d: record batches of at "
            "most %d bytes (batch.size)",
            topic,
            self._brokers,
            limit,
            size,
        )

    def _check_in_sync_replicas(self, topics: list[str]) -> None:
        """Refuse to start writing with acks=all to a partition that has fewer in-sync
        replicas than its topic's `min.insync.replicas` (capped at its replica count, as
        Kafka caps it: `Partition.effectiveMinIsr`): Kafka refuses every such write with
        NOT_ENOUGH_REPLICAS, and librdkafka would retry it until message.timeout.ms (5
        minutes by default) and then report only a timeout. TiCDC checks this setting at
        start too (tiflow pkg/sink/kafka/options.go, validateMinInsyncReplicas).

        Raises:
            DeliveryError: such a partition, named with its counts and what to change.
        """
        if not self._acks_all:
            return
        for topic in topics:
            problem = self._in_sync_problem(topic)
            if problem is not None:
                raise DeliveryError(problem, brokers=self._brokers)

    def _in_sync_problem(self, topic: str) -> str | None:
        """What keeps acks=all writes to `topic` from succeeding, from the last metadata
        and configs read, or None."""
        wanted = self._min_insync_replicas.get(topic)
        if wanted is None:
            return None
        for partition, (in_sync, replicas) in sorted(self._replicas.get(topic, {}).items()):
            needed = min(wanted, replicas)
            if in_sync < needed:
                return (
                    f"partition {partition} of topic {topic} on Kafka brokers "
                    f"{self._brokers} has {in_sync} in-sync replica(s) of {replicas}, fewer "
                    f"than the topic's min.insync.replicas {wanted}: Kafka refuses writes "
                    "with acks=all (NOT_ENOUGH_REPLICAS) until its replicas catch up; bring "
                    "the brokers holding them back, or lower the topic's "
                    "min.insync.replicas (kafka.acks=1 would be acknowledged by the leader "
                    "alone, and lost with it)"
                )
        return None

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
            undelivered = self._producer.flush(min(_FLUSH_SLICE_S, _remaining(deadline)))
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
        close = getattr(producer, "close", None)  # confluent-kafka >= 2.13
        if close is not None:
            close()
        self._admin = None

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
            known = self._partitions.get(topic)
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
                f"{topic} partition {partition}: {_describe(exc)}"
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
            limit = self._max_message_bytes.get(topic)
            if topic not in self._max_message_bytes:
                with _quiet_lookup():
                    limit = self.topic_max_message_bytes(topic)
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
        with _quiet_lookup():
            self._min_insync_replicas.pop(topic, None)
            self._max_message_bytes.pop(topic, None)
            self._describe_topics([topic], timeout=wait, warn=False)
            self._read_partition_counts([topic], time.monotonic() + wait)
        return self._in_sync_problem(topic)

    def _delivery_error(self, *, undelivered: int, waited_s: float | None = None) -> DeliveryError:
        brokers = self._brokers
        if self._fatal is not None:
            message = (
                f"the Kafka producer failed on brokers {brokers} writing topics "
                f"{self._topics_text()}: {_describe(self._fatal)}; {self._failed} of "
                f"{self._sent} messages were not delivered"
            )
        elif self._first_failure is not None:
            failure = self._first_failure
            message = (
                f"{self._failed} of {self._sent} messages were not delivered to Kafka "
                f"brokers {brokers}; first failure: topic {failure.topic} partition "
                f"{failure.partition}: {_describe(failure.error)}"
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
                message += f"; last client error: {_describe(self._last_error)}"
            message += "; check that the brokers are reachable or raise kafka.message.timeout.ms"
        return DeliveryError(message, brokers=brokers)


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


@contextlib.contextmanager
def _quiet_lookup() -> Iterator[None]:
    """A look-up that only adds to an error's message: its own failure leaves the
    message as it was."""
    try:
        yield
    except (KafkaException, DeliveryError):
        pass


def _replica_counts(partitions: Mapping[int, Any]) -> dict[int, tuple[int, int]]:
    """(in-sync replicas, replicas) of each partition in a topic's metadata; partitions
    whose metadata lists no replicas are left out."""
    counts = {}
    for partition, metadata in partitions.items():
        replicas = getattr(metadata, "replicas", None)
        if replicas:
            counts[partition] = (len(getattr(metadata, "isrs", None) or ()), len(replicas))
    return counts


def _int_entry(entries: Mapping[str, Any], name: str) -> int | None:
    """A DescribeConfigs entry's value as an int; None when the broker has none."""
    entry = entries.get(name)
    if entry is None or entry.value is None:
        return None
    return int(entry.value)


def _batch_size_within(limit: int) -> int:
    """The `batch.size` whose record batches stay within a topic's `max.message.bytes`:
    room for the batch's framing (TiCDC keeps 128 bytes below the limit), and for
    compression, which can make incompressible data a little larger (lz4 by 0.4%)."""
    return max(1, limit - 128 - limit // 100)


def producer_settings(config: KafkaConfig) -> dict[str, Any]:
    """The librdkafka settings of a task's producer: the sink's defaults under the user's
    `kafka.*` settings."""
    settings = dict(_PRODUCER_DEFAULTS)
    settings.update(config.producer_config())
    settings.setdefault("bootstrap.servers", config.bootstrap_servers)
    # The delivery counts depend on it (see _PRODUCER_DEFAULTS), so a `kafka.*` option
    # cannot turn it off; set as a bool, which is what confluent-kafka accepts here.
    settings["delivery.report.only.error"] = True
    return settings


@functools.cache
def _warn_fewer_partitions(brokers: str, topic: str, wanted: int, count: int) -> None:
    # Once per process and topic: every task of every batch asks.
    logger.warning(
        "topic %s on Kafka brokers %s has %d partitions and partition-num is %d: messages go "
        "to partitions 0..%d only, as TiCDC sends them",
        topic,
        brokers,
        count,
        wanted,
        wanted - 1,
    )


# -- checking the librdkafka settings on the driver -----------------------------------------

# Common librdkafka producer settings, for "did you mean" suggestions when librdkafka
# does not know a `kafka.*` name (librdkafka has no API listing its settings; a unit test
# checks librdkafka knows each of these). CONFIGURATION.md lists them all.
_KNOWN_SETTINGS = (
    "acks",
    "allow.auto.create.topics",
    "api.version.request",
    "batch.num.messages",
    "batch.size",
    "bootstrap.servers",
    "broker.address.family",
    "client.dns.lookup",
    "client.id",
    "compression.level",
    "compression.type",
    "connections.max.idle.ms",
    "debug",
    "delivery.timeout.ms",
    "enable.idempotence",
    "enable.ssl.certificate.verification",
    "linger.ms",
    "log_level",
    "max.in.flight.requests.per.connection",
    "message.max.bytes",
    "message.send.max.retries",
    "message.timeout.ms",
    "metadata.max.age.ms",
    "queue.buffering.max.kbytes",
    "queue.buffering.max.messages",
    "queue.buffering.max.ms",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "request.required.acks",
    "request.timeout.ms",
    "retries",
    "retry.backoff.max.ms",
    "retry.backoff.ms",
    "sasl.kerberos.keytab",
    "sasl.kerberos.principal",
    "sasl.kerberos.service.name",
    "sasl.mechanism",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.password",
    "sasl.username",
    "security.protocol",
    "socket.connection.setup.timeout.ms",
    "socket.keepalive.enable",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "socket.timeout.ms",
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.certificate.pem",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "statistics.interval.ms",
    "sticky.partitioning.linger.ms",
    "topic.metadata.refresh.interval.ms",
    "transaction.timeout.ms",
)
_CONFIGURATION_MD = "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md"
_CREATE_FAILED = "Failed to create producer"


class _ConfigWarnings:
    """The `logger` of the probe client of `check_client_config`: keeps librdkafka's
    configuration warnings (CONFWARN), drops the rest (the probe has no brokers)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, level: int, fmt: str, *args: Any) -> None:
        if level >= logging.WARNING and len(args) == 3 and args[0] == "CONFWARN":
            self.lines.append(str(args[2]).split("]: ", 1)[-1])


def _is_file_setting(name: str) -> bool:
    return name.endswith(".location") or name == "sasl.kerberos.keytab"


@functools.lru_cache(maxsize=32)
def check_client_config(config: KafkaConfig) -> tuple[str, ...]:
    """Check the task producers' librdkafka settings where this runs (the driver, `ticdc-
    sink check`), without connecting: librdkafka validates every setting when a client is
    made, and a client without `bootstrap.servers` opens no connection. Settings naming
    files (`*.location`, `sasl.kerberos.keytab`) are left to the tasks: the files may
    exist only where the tasks run (spark-submit --files).

    Returns librdkafka's configuration warnings (e.g. a consumer setting that the
    producer ignores), for the caller to log or print. Cached per configuration.

    Raises:
        ConfigError: librdkafka refuses a setting: the option named (with a close match
            for an unknown name) and librdkafka's reason, secrets masked.
    """
    settings = producer_settings(config)
    probe = {
        name: value
        for name, value in settings.items()
        if name != "bootstrap.servers" and not _is_file_setting(name)
    }
    warnings = _ConfigWarnings()
    try:
        client = confluent_kafka.Producer({**probe, "logger": warnings})
    except KafkaException as exc:
        raise _refused_setting(probe, exc) from None
    close = getattr(client, "close", None)  # confluent-kafka >= 2.13
    if close is not None:
        close()
    return tuple(warnings.lines)


def _refused_setting(probe: Mapping[str, Any], exc: KafkaException) -> ConfigError:
    """A ConfigError naming the setting librdkafka refused. librdkafka names a setting by
    its canonical name (`request.required.acks` for `acks`), so each one is tried alone
    to find the culprit; what librdkafka refuses only when making the client ("Failed to
    create producer: ...", e.g. SASL without a user) is about the settings together."""
    reason = _describe(exc).removesuffix(" (_INVALID_ARG)").strip()
    for secret in (str(v) for k, v in probe.items() if is_secret(k) and str(v)):
        reason = reason.replace(secret, "***")
    culprit = None
    if not reason.startswith(_CREATE_FAILED):
        for name, value in probe.items():
            try:
                confluent_kafka.Producer({name: value, "logger": _ConfigWarnings()})
            except KafkaException as alone:
                if not _describe(alone).startswith(_CREATE_FAILED):
                    culprit = name
                    break
    if culprit is None:
        return ConfigError(
            "librdkafka, the Kafka client, refuses the kafka.* settings: "
            f"{reason.removeprefix(_CREATE_FAILED).lstrip(': ')}; check the kafka.* options "
            "and the sink-uri parameters that set them (sasl-*, ca, cert, key, ...)",
            option="kafka.*",
        )
    option = f"kafka.{culprit}"
    if "No such configuration property" in reason:
        close = difflib.get_close_matches(culprit, _KNOWN_SETTINGS, n=1, cutoff=0.75)
        hint = f"did you mean 'kafka.{close[0]}'?" if close else f"see {_CONFIGURATION_MD}"
        return ConfigError(
            f"option '{option}' is unknown to librdkafka, the Kafka client; {hint}",
            option=option,
            allowed=(f"kafka.{close[0]}",) if close else None,
        )
    return ConfigError(
        f"option '{option}' is refused by librdkafka, the Kafka client: {reason}",
        option=option,
    )


def _message_timeout_ms(config: Mapping[str, Any]) -> int:
    value = config.get("message.timeout.ms", config.get("delivery.timeout.ms"))
    # 0 means "forever" to librdkafka; flush stays bounded anyway.
    if value is None or int(value) <= 0:
        return _DEFAULT_MESSAGE_TIMEOUT_MS
    return int(value)


def _remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)


# Errors that say "not now" rather than "no": the connection dropped or timed out, or the
# broker is not ready (a new topic without a leader yet, a controller moving). Metadata
# reads and topic creation are retried on these until broker-timeout-ms runs out.
_TRANSIENT = frozenset(
    {
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._TIMED_OUT,
        KafkaError._DESTROY_BROKER,  # the connection was torn down mid-request
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_CONTROLLER,
    }
)


def _is_transient(error: KafkaError | KafkaException) -> bool:
    if isinstance(error, KafkaException):
        if not (error.args and isinstance(error.args[0], KafkaError)):
            return False
        error = error.args[0]
    return error.code() in _TRANSIENT or bool(error.retriable())


def _pause_before_retry(deadline: float) -> bool:
    """Wait a little before asking the brokers again; False when the deadline leaves no
    time for another try."""
    if time.monotonic() + _METADATA_RETRY_S >= deadline:
        return False
    time.sleep(_METADATA_RETRY_S)
    return True


def _describe(error: KafkaError | KafkaException) -> str:
    """The broker's words for an error and its code name, e.g. "Broker: Unknown topic or
    partition (UNKNOWN_TOPIC_OR_PART)"."""
    if isinstance(error, KafkaException):
        if not (error.args and isinstance(error.args[0], KafkaError)):
            return str(error)
        error = error.args[0]
    return f"{error.str()} ({error.name()})"
