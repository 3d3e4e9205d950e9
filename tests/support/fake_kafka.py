"""Fakes of confluent_kafka's clients, for tests of `ticdc_sink.producer.KafkaProducer`
without a broker: `make_producer(cluster)` is a real `KafkaProducer` whose librdkafka
producer and admin client are `FakeClient` and `FakeAdmin` over one `FakeCluster`, which
holds the topics and how the broker misbehaves.

| fake | stands for | what it does |
| --- | --- | --- |
| `FakeClient` | `confluent_kafka.Producer` | queues up to `capacity` messages |
|  |  | (`BufferError` beyond); `poll` acknowledges `acks_per_poll` of |
|  |  | them (all: None), `flush` all; calls the delivery callbacks with the |
|  |  | cluster's errors; `list_topics` answers from the cluster's topics |
| `FakeAdmin` | `confluent_kafka.admin.AdminClient` | `create_topics` adds them to the |
|  |  | cluster, or fails as the cluster says; `describe_configs` answers |
|  |  | the cluster's `topic_configs` (none by default, as Tansu), after |
|  |  | its `describe_errors` |
| `FakeCluster` | the brokers | topics, reachability, failing/stuck partitions, errors |
|  |  | served once each (metadata, topic, create), topic configs, |
|  |  | in-sync replicas (`in_sync`: topic -> (in sync, replicas)) |

`tests/support/fake_producer.py` fakes the level above: the sink's producer itself.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import attrs
from confluent_kafka import KafkaError, KafkaException

from ticdc_sink.config import KafkaConfig
from ticdc_sink.producer import KafkaProducer

__all__ = [
    "BROKERS",
    "BrokenMessage",
    "FakeAdmin",
    "FakeClient",
    "FakeCluster",
    "FakeMessage",
    "kafka_config",
    "make_producer",
]

BROKERS = "broker-a:9092,broker-b:9092"


def kafka_config(**changes: Any) -> KafkaConfig:
    changes.setdefault("bootstrap_servers", BROKERS)
    changes.setdefault("broker_timeout_ms", 2000)
    return KafkaConfig(**changes)


class FakeMessage:
    def __init__(self, topic: str, partition: int, key: bytes | None, value: bytes | None):
        self._topic, self._partition, self._key, self._value = topic, partition, key, value

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def __len__(self) -> int:
        return len(self._value) if self._value is not None else 0


class BrokenMessage(FakeMessage):
    """What confluent-kafka hands a callback called with an exception already set."""

    def key(self) -> bytes | None:
        raise SystemError("<method 'key' of 'cimpl.Message' objects> returned a result")


@attrs.define
class FakeCluster:
    """What the fake clients share: the topics, and how the broker misbehaves."""

    topics: dict[str, int] = attrs.field(factory=dict)
    reachable: bool = True
    failing_partitions: dict[tuple[str, int], KafkaError] = attrs.field(factory=dict)
    acks_per_poll: int | None = None  # None: every queued message per poll
    stuck: bool = False  # nothing is ever acknowledged
    create_error: KafkaError | None = None
    # Errors served once each, in order, before the fake answers normally: a lost
    # connection during a metadata read, a topic not ready yet, a lost CreateTopics answer.
    metadata_errors: list[KafkaError] = attrs.field(factory=list)
    topic_errors: list[KafkaError] = attrs.field(factory=list)
    create_errors: list[KafkaError] = attrs.field(factory=list)
    race_partitions: int | None = None  # another task creates the topic first
    stuck_partitions: set[tuple[str, int]] = attrs.field(factory=set)  # never acknowledged
    broken_messages: bool = False  # a delivered message's accessors raise
    producers: list[FakeClient] = attrs.field(factory=list)
    admins: list[FakeAdmin] = attrs.field(factory=list)
    # Topic configs DescribeConfigs answers (`max.message.bytes`, `min.insync.replicas`),
    # after failing with each of `describe_errors` once.
    topic_configs: dict[str, dict[str, str]] = attrs.field(factory=dict)
    describe_errors: list[KafkaError] = attrs.field(factory=list)
    # Each partition's (in-sync replicas, replicas) in metadata; unset: none listed.
    in_sync: dict[str, tuple[int, int]] = attrs.field(factory=dict)


class FakeClient:
    """confluent_kafka.Producer with a bounded queue of `capacity` messages."""

    def __init__(self, config: dict[str, Any], cluster: FakeCluster, capacity: int = 100_000):
        self.config = config
        self.cluster = cluster
        self.capacity = capacity
        self.queue: deque[tuple[FakeMessage, Any]] = deque()
        self.max_queued = 0
        self.buffer_errors = 0
        self.polls: list[float] = []
        self.flush_timeouts: list[float] = []
        self.metadata_timeouts: list[float] = []
        self.closed = False
        self.purged = False
        cluster.producers.append(self)

    def produce(self, topic, value=None, key=None, partition=-1, on_delivery=None) -> None:
        count = self.cluster.topics.get(topic)
        if count is not None and partition >= count:
            # librdkafka knows the topic has fewer partitions now
            raise KafkaException(
                KafkaError(
                    KafkaError._UNKNOWN_PARTITION,
                    "Unable to produce message: Local: Unknown partition",
                )
            )
        if len(self.queue) >= self.capacity:
            self.buffer_errors += 1
            raise BufferError("Local: Queue full")
        self.queue.append((FakeMessage(topic, partition, key, value), on_delivery))
        self.max_queued = max(self.max_queued, len(self.queue))

    def _ack(self, limit: int | None) -> int:
        if self.cluster.stuck:
            return 0
        served = 0
        kept: deque[tuple[FakeMessage, Any]] = deque()
        while self.queue and (limit is None or served < limit):
            message, callback = self.queue.popleft()
            if (message.topic(), message.partition()) in self.cluster.stuck_partitions:
                kept.append((message, callback))
                continue
            error = self.cluster.failing_partitions.get((message.topic(), message.partition()))
            if self.cluster.broken_messages:
                message = BrokenMessage(message.topic(), message.partition(), None, b"v")
            callback(error, message)  # a callback that raises fails the test here
            served += 1
        self.queue.extendleft(reversed(kept))
        return served

    def poll(self, timeout: float = -1) -> int:
        self.polls.append(timeout)
        return self._ack(self.cluster.acks_per_poll)

    def flush(self, timeout: float = -1) -> int:
        self.flush_timeouts.append(timeout)
        self._ack(None)
        return len(self.queue)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        self.metadata_timeouts.append(timeout)
        if not self.cluster.reachable:
            raise KafkaException(
                KafkaError(KafkaError._TRANSPORT, "Failed to get metadata: Local: Broker transport")
            )
        if self.cluster.metadata_errors:
            raise KafkaException(self.cluster.metadata_errors.pop(0))
        if topic is None:  # every topic, as librdkafka asks for them all
            return SimpleNamespace(
                topics={
                    name: SimpleNamespace(error=None, partitions=dict.fromkeys(range(count)))
                    for name, count in self.cluster.topics.items()
                }
            )
        count = self.cluster.topics.get(topic)
        if self.cluster.topic_errors:
            meta = SimpleNamespace(
                error=self.cluster.topic_errors.pop(0),
                partitions={p: None for p in range(count or 0)},
            )
        elif count is None:
            meta = SimpleNamespace(
                error=KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART), partitions={}
            )
        else:
            meta = SimpleNamespace(error=None, partitions={p: None for p in range(count)})
            if topic in self.cluster.in_sync:
                in_sync, replicas = self.cluster.in_sync[topic]
                partition = SimpleNamespace(
                    replicas=list(range(replicas)), isrs=list(range(in_sync))
                )
                meta.partitions = dict.fromkeys(range(count), partition)
        return SimpleNamespace(topics={topic: meta})

    def purge(self) -> None:
        self.purged = True
        self.queue.clear()

    def close(self) -> None:
        self.closed = True

    def __len__(self) -> int:
        return len(self.queue)


class FakeAdmin:
    def __init__(self, config: dict[str, Any], cluster: FakeCluster):
        self.config = config
        self.cluster = cluster
        self.created: list[Any] = []
        self.create_calls = 0
        cluster.admins.append(self)

    def create_topics(self, new_topics, request_timeout=None, operation_timeout=None):
        self.create_calls += 1
        futures = {}
        for new in new_topics:
            self.created.append(new)
            future: Future[None] = Future()
            if self.cluster.create_error is not None:
                future.set_exception(KafkaException(self.cluster.create_error))
            elif self.cluster.create_errors:
                future.set_exception(KafkaException(self.cluster.create_errors.pop(0)))
            elif self.cluster.race_partitions is not None or new.topic in self.cluster.topics:
                self.cluster.topics.setdefault(new.topic, self.cluster.race_partitions or 1)
                future.set_exception(KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS)))
            else:
                self.cluster.topics[new.topic] = new.num_partitions
                future.set_result(None)
            futures[new.topic] = future
        return futures

    def describe_configs(self, resources: list[Any], request_timeout: float = -1) -> dict:
        futures: dict[Any, Future[dict[str, Any]]] = {}
        for resource in resources:
            future: Future[dict[str, Any]] = Future()
            if self.cluster.describe_errors:
                future.set_exception(KafkaException(self.cluster.describe_errors.pop(0)))
            else:
                configs = self.cluster.topic_configs.get(resource.name, {})
                future.set_result(_config_entries(configs))
            futures[resource] = future
        return futures


def _config_entries(configs: dict[str, str]) -> dict[str, Any]:
    return {name: SimpleNamespace(value=value) for name, value in configs.items()}


def make_producer(
    cluster: FakeCluster,
    config: KafkaConfig | None = None,
    *,
    capacity: int = 100_000,
    flush_timeout_s: float | None = None,
) -> KafkaProducer:
    return KafkaProducer(
        config or kafka_config(),
        factory=lambda conf: FakeClient(conf, cluster, capacity),
        admin_factory=lambda conf: FakeAdmin(conf, cluster),
        flush_timeout_s=flush_timeout_s,
    )
