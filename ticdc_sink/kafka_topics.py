"""Topic metadata for one write task's producer: partition counts, creating missing
topics, and what Kafka enforces on writes to a topic.

`TopicAdmin` gives the partition count of a topic, creating the topic when it does not
exist with `partition-num` and applying TiCDC's partition-num rule to an existing one, as
TiCDC's topic manager does; and, with it, what Kafka enforces on writes there:
`max.message.bytes` (DescribeConfigs) and `min.insync.replicas` (acks=all to a partition
short of in-sync replicas fails before sending). Metadata comes from the producer's own
client (`TopicMetadata`, so the producer's connections serve it), topic creation and configs
from an admin client made when first needed. Every request is bounded by
`broker-timeout-ms` and asked again after a lost connection until then.

It knows nothing of protocols, Spark or rows, and sends nothing (`producer` does). Objects
are per task and single-threaded; the admin factory is a parameter, so unit tests pass a
fake (`LibrdkafkaAdmin` says what one needs).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    ClusterMetadata,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from ticdc_sink.config import KafkaConfig
from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.kafka_client import describe, is_transient, remaining

__all__ = [
    "DEFAULT_PARTITION_NUM",
    "LibrdkafkaAdmin",
    "TopicAdmin",
    "TopicMetadata",
]

logger = logging.getLogger(__name__)

#: Partitions of a topic the sink creates when `partition-num` is not set; TiCDC's default
#: (tiflow pkg/sink/kafka/options.go, defaultPartitionNum).
DEFAULT_PARTITION_NUM = 3

# Pause between metadata reads while waiting for a created topic to become visible.
_METADATA_RETRY_S = 0.05


class TopicMetadata(Protocol):
    """Where `TopicAdmin` reads topic metadata: the producer's librdkafka client."""

    def list_topics(self, topic: str | None, /, *, timeout: float) -> ClusterMetadata: ...


class LibrdkafkaAdmin(Protocol):
    """What `TopicAdmin` uses of librdkafka's admin client (`AdminClient`, or a unit
    test's fake given as `admin_factory`)."""

    def create_topics(
        self, new_topics: list[NewTopic], *, request_timeout: float, operation_timeout: float
    ) -> dict[str, Future[None]]: ...

    def describe_configs(
        self, resources: list[ConfigResource], *, request_timeout: float
    ) -> dict[ConfigResource, Future[dict[str, ConfigEntry]]]: ...


class TopicAdmin:
    """The topics one producer writes to: partition counts, creation and write limits.

    `metadata()` gives the client to read metadata from (the producer's current one);
    `admin_factory(admin_config)` makes the admin client when a topic has to be created
    or its configs read; `acks_all` says whether writes wait for every in-sync replica
    (then `min.insync.replicas` is checked). Everything asked is cached per object.
    """

    def __init__(
        self,
        config: KafkaConfig,
        *,
        metadata: Callable[[], TopicMetadata],
        admin_factory: Callable[[dict[str, Any]], LibrdkafkaAdmin],
        admin_config: Mapping[str, Any],
        acks_all: bool,
    ) -> None:
        self._config = config
        self._brokers = config.bootstrap_servers
        self._broker_timeout_s = config.broker_timeout_ms / 1000.0
        self._metadata = metadata
        self._admin_factory = admin_factory
        self._admin_config = dict(admin_config)
        self._admin: LibrdkafkaAdmin | None = None
        self._acks_all = acks_all
        self._partitions: dict[str, int] = {}
        self._max_message_bytes: dict[str, int | None] = {}
        self._min_insync_replicas: dict[str, int | None] = {}
        # Per topic and partition: (in-sync replicas, replicas), from the last metadata.
        self._replicas: dict[str, dict[int, tuple[int, int]]] = {}

    def known_partition_count(self, topic: str) -> int | None:
        """The partition count found for `topic` so far, without asking the brokers."""
        return self._partitions.get(topic)

    def known_max_message_bytes(self, topic: str) -> int | None:
        """The topic's `max.message.bytes` read so far (None: not read, or not known),
        without asking the brokers."""
        return self._max_message_bytes.get(topic)

    def close(self) -> None:
        """Drop the admin client (made again if asked again)."""
        self._admin = None

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
                metadata = self._metadata().list_topics(
                    topics[0] if len(topics) == 1 else None, timeout=remaining(deadline)
                )
            except KafkaException as exc:
                if is_transient(exc) and _pause_before_retry(deadline):
                    continue
                raise DeliveryError(
                    f"cannot reach Kafka brokers {self._brokers} within broker-timeout-ms "
                    f"{self._config.broker_timeout_ms} to read metadata of topic {topics[0]}: "
                    f"{describe(exc)}; check kafka.bootstrap.servers and that the brokers "
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
                elif is_transient(error) and _pause_before_retry(deadline):
                    retry = True
                    break
                else:
                    raise DeliveryError(
                        f"Kafka brokers {self._brokers} returned an error for topic {topic}: "
                        f"{describe(error)}",
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
        admin = self._admin_client()
        pending = list(topics)
        created: list[str] = []
        while pending:
            timeout = remaining(deadline)
            futures = admin.create_topics(
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
                    futures[topic].result(timeout=remaining(deadline) + 1.0)
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
                    if not is_transient(exc):
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
            f"{self._brokers}: {describe(exc)}; create the topic beforehand or fix the options",
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
        admin = self._admin_client()
        deadline = time.monotonic() + (self._broker_timeout_s if timeout is None else timeout)
        entries: dict[str, Any] = {}
        pending = new
        while pending:
            failed: dict[str, Exception] = {}
            try:
                futures = admin.describe_configs(
                    [ConfigResource(ResourceType.TOPIC, topic) for topic in pending],
                    request_timeout=remaining(deadline),
                )
            except KafkaException as exc:
                futures, failed = {}, dict.fromkeys(pending, exc)
            for resource, future in futures.items():
                try:
                    entries[resource.name] = future.result(timeout=remaining(deadline) + 1.0)
                except (KafkaException, FutureTimeoutError) as exc:
                    failed[resource.name] = exc
            lost = {t: e for t, e in failed.items() if isinstance(e, KafkaException)}
            if lost and all(is_transient(e) for e in lost.values()):
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

    def recheck_in_sync(self, topic: str, timeout: float) -> str | None:
        """`in_sync_problem` from the topic's configs and metadata read again, waiting at
        most `timeout`: what explains a failed delivery. Its own failure is silent (it only
        adds to an error's message) and leaves None."""
        with _quiet_lookup():
            self._min_insync_replicas.pop(topic, None)
            self._max_message_bytes.pop(topic, None)
            self._describe_topics([topic], timeout=timeout, warn=False)
            self._read_partition_counts([topic], time.monotonic() + timeout)
        return self._in_sync_problem(topic)

    def _admin_client(self) -> LibrdkafkaAdmin:
        if self._admin is None:
            self._admin = self._admin_factory(dict(self._admin_config))
        return self._admin


@contextlib.contextmanager
def _quiet_lookup() -> Iterator[None]:
    """A look-up that only adds to an error's message: its own failure leaves the
    message as it was."""
    try:
        yield
    except (KafkaException, DeliveryError):
        pass


def _pause_before_retry(deadline: float) -> bool:
    """Wait a little before asking the brokers again; False when the deadline leaves no
    time for another try."""
    if time.monotonic() + _METADATA_RETRY_S >= deadline:
        return False
    time.sleep(_METADATA_RETRY_S)
    return True


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
