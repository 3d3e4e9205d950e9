"""KafkaProducer against Kafka: topic creation, partition counts, a 10k-message round trip,
null vs empty keys, a topic recreated smaller under a running producer, an unreachable
broker."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest

from tests.support.broker import free_port
from ticdc_sink.config import KafkaConfig
from ticdc_sink.errors import DeliveryError
from ticdc_sink.producer import KafkaProducer

pytestmark = pytest.mark.integration


def kafka_config(broker: Any, **changes: Any) -> KafkaConfig:
    return KafkaConfig(
        bootstrap_servers=broker.bootstrap,
        client_config={"linger.ms": "5"},
        broker_timeout_ms=10_000,
        **changes,
    )


def test_round_trip_of_10k_messages_across_partitions(broker: Any, topics: Any) -> None:
    topic = topics("round_trip")
    with KafkaProducer(kafka_config(broker, partition_num=4)) as producer:
        assert producer.partition_count(topic) == 4
        sent: dict[int, list[tuple[bytes, bytes]]] = {p: [] for p in range(4)}
        for i in range(10_000):
            partition = (i * 7) % 4
            key, value = b"key-%d" % i, b'{"row":%d,"pad":"%s"}' % (i, b"x" * (i % 50))
            producer.send(topic, partition, key, value)
            sent[partition].append((key, value))
        producer.flush()
        delivered = producer.delivered

    assert {tp: stats.messages for tp, stats in delivered.items()} == {
        (topic, p): len(sent[p]) for p in range(4)
    }
    assert sum(stats.bytes for stats in delivered.values()) == sum(
        len(k) + len(v) for rows in sent.values() for k, v in rows
    )
    records = broker.consume_all(topic)
    assert len(records) == 10_000
    for partition in range(4):
        got = [r for r in records if r.partition == partition]
        assert [r.offset for r in got] == list(range(len(sent[partition])))
        assert [(r.key, r.value) for r in got] == sent[partition]


def test_null_and_empty_keys_and_values_are_kept_apart(broker: Any, topics: Any) -> None:
    topic = topics("keys")
    with KafkaProducer(kafka_config(broker, partition_num=1)) as producer:
        producer.partition_count(topic)
        producer.send(topic, 0, None, b"null key")  # TiCDC watermark
        producer.send(topic, 0, b"", b"empty key")  # TiCDC simple rows (sarama StringEncoder)
        producer.send(topic, 0, b"k", None)  # tombstone
        producer.send(topic, 0, b"k", b"")
        producer.flush()
    records = broker.consume_all(topic)
    assert [(r.key, r.value) for r in records] == [
        (None, b"null key"),
        (b"", b"empty key"),
        (b"k", None),
        (b"k", b""),
    ]


def test_missing_topic_is_created_with_partition_num_not_broker_default(
    broker: Any, topics: Any
) -> None:
    # Kafka auto-creates topics with 1 partition (num.partitions) on a metadata request
    # that allows it; the sink creates them itself.
    with KafkaProducer(kafka_config(broker)) as producer:
        assert producer.partition_count(topics("created_default")) == 3
    assert broker.partition_count(topics("created_default")) == 3
    with KafkaProducer(kafka_config(broker, partition_num=6)) as producer:
        assert producer.partition_count(topics("created_six")) == 6
    assert broker.partition_count(topics("created_six")) == 6


def test_existing_topic_partition_count_is_used(broker: Any, topics: Any) -> None:
    topic = topics("existing")
    broker.create_topic(topic, 5)
    with KafkaProducer(kafka_config(broker, partition_num=3)) as producer:
        assert producer.partition_count(topic) == 5
        producer.send(topic, 4, b"k", b"last partition")
        producer.flush()
    assert [(r.partition, r.value) for r in broker.consume_all(topic)] == [(4, b"last partition")]


def test_tasks_creating_the_same_topic_at_once_agree(broker: Any, topics: Any) -> None:
    counts: list[int] = []
    errors: list[BaseException] = []

    def task() -> None:
        try:
            with KafkaProducer(kafka_config(broker, partition_num=2)) as producer:
                counts.append(producer.partition_count(topics("raced")))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=task) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Counter(counts) == Counter({2: 4})


def test_unreachable_broker_fails_within_broker_timeout_and_names_it() -> None:
    closed = f"127.0.0.1:{free_port()}"
    config = KafkaConfig(bootstrap_servers=closed, broker_timeout_ms=1500)
    started = time.monotonic()
    with KafkaProducer(config) as producer, pytest.raises(DeliveryError) as info:
        producer.partition_count("anything")
    elapsed = time.monotonic() - started
    # The 1.5 s bound plus client start-up and shutdown; far below the 30 s default that
    # would mean the option was ignored, with room for a loaded machine.
    assert elapsed < 20, elapsed
    assert closed in str(info.value) and info.value.brokers == closed
    assert "broker-timeout-ms 1500" in str(info.value)


def test_a_topic_recreated_smaller_under_a_running_producer_fails_the_write_promptly(
    broker: Any, topics: Any
) -> None:
    # Issue 13: the write hung until message.timeout.ms, or failed with a raw SystemError
    # or cimpl.KafkaException; now it ends at the first refused message as a DeliveryError
    # naming the brokers and the topic.
    topic = topics("recreated")
    broker.create_topic(topic, 3)
    config = KafkaConfig(
        bootstrap_servers=broker.bootstrap,
        broker_timeout_ms=5000,
        client_config={"message.timeout.ms": "120000"},
    )
    with KafkaProducer(config) as producer:
        assert producer.partition_count(topic) == 3
        for i in range(30):
            producer.send(topic, i % 3, b"k", b"before-%d" % i)
        producer.flush()
        broker.delete_topic(topic)
        broker.create_topic(topic, 1)
        started = time.monotonic()
        with pytest.raises(DeliveryError) as info:
            for i in range(30):
                producer.send(topic, i % 3, b"k", b"after-%d" % i)
            producer.flush()
        elapsed = time.monotonic() - started
    assert elapsed < 60  # message.timeout.ms is 120 s: the first refusal ended the write
    text = str(info.value)
    assert broker.bootstrap in text and f"topic {topic} partition" in text
    assert "Unknown partition" in text or "has no partition" in text


def test_librdkafka_writes_nothing_to_stderr_itself(tmp_path) -> None:
    # Issue 13: an unreachable broker printed ~118 `%3|...|FAIL|` lines before the
    # DeliveryError; they now go through Python logging (logger ticdc_sink.librdkafka).
    script = tmp_path / "unreachable.py"
    script.write_text(
        "import logging\n"
        "from ticdc_sink.config import KafkaConfig\n"
        "from ticdc_sink.errors import DeliveryError\n"
        "from ticdc_sink.producer import KafkaProducer\n"
        f"config = KafkaConfig(bootstrap_servers='127.0.0.1:{free_port()}', "
        "client_config={'message.timeout.ms': '2000'})\n"
        "with KafkaProducer(config) as producer:\n"
        "    producer.send('t', 0, None, b'v')\n"
        "    try:\n"
        "        producer.flush()\n"
        "    except DeliveryError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "were not delivered" in done.stdout or "not acknowledged" in done.stdout
    assert "|FAIL|" not in done.stderr and done.stderr == ""
