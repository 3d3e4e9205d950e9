"""KafkaProducer against a fake librdkafka: metadata, topic creation, back-pressure,
delivery tracking and the errors a task fails with. No broker needed."""

from __future__ import annotations

import logging
import time

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException

from tests.support.fake_kafka import BROKERS, FakeCluster, kafka_config, make_producer
from ticdc_sink import kafka_settings as producer_module
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.kafka_settings import check_client_config, producer_settings
from ticdc_sink.kafka_topics import DEFAULT_PARTITION_NUM
from ticdc_sink.producer import PartitionStats

SECRET = "hunter2-secret"


# -- metadata and topic creation ------------------------------------------------------


def test_existing_topic_uses_its_real_partition_count_and_caches_it():
    cluster = FakeCluster(topics={"orders": 7})
    producer = make_producer(cluster, kafka_config(partition_num=3))
    assert producer.partition_count("orders") == 7
    assert producer.partition_count("orders") == 7
    assert len(cluster.producers[0].metadata_timeouts) == 1
    # nothing created; the admin client only read the topic's configs
    assert [a.created for a in cluster.admins] == [[]]


def test_missing_topic_is_created_with_default_partition_num():
    cluster = FakeCluster()
    producer = make_producer(cluster, kafka_config(replication_factor=2))
    assert producer.partition_count("t1") == DEFAULT_PARTITION_NUM == 3
    (admin,) = cluster.admins
    (created,) = admin.created
    assert (created.topic, created.num_partitions, created.replication_factor) == ("t1", 3, 2)
    assert cluster.topics == {"t1": 3}


def test_missing_topic_is_created_with_partition_num():
    cluster = FakeCluster()
    producer = make_producer(cluster, kafka_config(partition_num=6))
    assert producer.partition_count("t1") == 6
    assert cluster.topics == {"t1": 6}


def test_admin_client_is_plain_and_never_auto_creates():
    cluster = FakeCluster()
    config = kafka_config(client_config={"sasl.username": "u", "sasl.password": SECRET})
    make_producer(cluster, config).partition_count("t1")
    admin_config = cluster.admins[0].config
    assert "enable.idempotence" not in admin_config and "acks" not in admin_config
    assert admin_config["allow.auto.create.topics"] == "false"
    assert admin_config["sasl.password"] == SECRET  # the admin must authenticate too
    assert admin_config["bootstrap.servers"] == BROKERS


def test_missing_topic_without_auto_create_topic_fails_naming_it():
    cluster = FakeCluster()
    producer = make_producer(cluster, kafka_config(auto_create_topic=False))
    with pytest.raises(DeliveryError) as info:
        producer.partition_count("t1")
    assert "topic t1 does not exist on Kafka brokers " + BROKERS in str(info.value)
    assert "auto-create-topic" in str(info.value)
    assert cluster.admins == [] and cluster.topics == {}


def test_topic_created_concurrently_by_another_task_uses_its_count():
    cluster = FakeCluster(race_partitions=5)
    producer = make_producer(cluster, kafka_config(partition_num=3))
    assert producer.partition_count("t1") == 5


def test_topic_creation_refused_names_topic_options_brokers_and_reason():
    cluster = FakeCluster(
        create_error=KafkaError(
            KafkaError.INVALID_REPLICATION_FACTOR, "Replication factor: 3 larger than brokers: 1"
        )
    )
    config = kafka_config(replication_factor=3, client_config={"sasl.password": SECRET})
    with pytest.raises(DeliveryError) as info:
        make_producer(cluster, config).partition_count("t1")
    text = str(info.value)
    assert "topic t1" in text and "replication-factor 3" in text and "partition-num 3" in text
    assert "larger than brokers" in text and BROKERS in text
    assert SECRET not in text
    assert info.value.brokers == BROKERS


def test_unreachable_broker_fails_within_broker_timeout_and_names_brokers():
    cluster = FakeCluster(reachable=False)
    config = kafka_config(broker_timeout_ms=400, client_config={"sasl.password": SECRET})
    producer = make_producer(cluster, config)
    started = time.monotonic()
    with pytest.raises(DeliveryError) as info:
        producer.partition_count("t1")
    elapsed = time.monotonic() - started
    text = str(info.value)
    assert text.startswith("ticdc: cannot reach Kafka brokers " + BROKERS)
    assert "broker-timeout-ms 400" in text and "_TRANSPORT" in text
    assert SECRET not in text
    # Asked again and again until the bound, never past it.
    timeouts = cluster.producers[0].metadata_timeouts
    assert len(timeouts) > 1 and all(0 < t <= 0.4 for t in timeouts)
    assert timeouts == sorted(timeouts, reverse=True)
    # The 0.4 s bound, far below the 30 s default, with room for a loaded machine.
    assert elapsed < 10, elapsed


def test_a_lost_connection_while_reading_metadata_is_retried():
    transport = KafkaError(KafkaError._TRANSPORT, "Local: Broker transport failure")
    cluster = FakeCluster(topics={"t1": 5}, metadata_errors=[transport, transport])
    assert make_producer(cluster).partition_count("t1") == 5
    assert len(cluster.producers[0].metadata_timeouts) == 3


def test_a_topic_without_a_leader_yet_is_asked_again():
    # Kafka answers LEADER_NOT_AVAILABLE for a topic created a moment ago.
    cluster = FakeCluster(
        topics={"t1": 4}, topic_errors=[KafkaError(KafkaError.LEADER_NOT_AVAILABLE)]
    )
    assert make_producer(cluster).partition_count("t1") == 4


def test_a_lost_create_topics_answer_is_retried_and_an_earlier_success_counts():
    lost = KafkaError(KafkaError._DESTROY_BROKER, "Broker handle destroyed without termination")
    cluster = FakeCluster(create_errors=[lost])
    assert make_producer(cluster, kafka_config(partition_num=6)).partition_count("t1") == 6
    assert [new.topic for new in cluster.admins[0].created] == ["t1", "t1"]


def test_a_refused_topic_error_is_not_retried():
    cluster = FakeCluster(
        topics={"t1": 1}, topic_errors=[KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)]
    )
    with pytest.raises(DeliveryError, match="TOPIC_AUTHORIZATION_FAILED"):
        make_producer(cluster).partition_count("t1")
    assert len(cluster.producers[0].metadata_timeouts) == 1


# -- producer settings ----------------------------------------------------------------


def test_producer_config_defaults_and_user_overrides():
    cluster = FakeCluster()
    make_producer(cluster)
    config = cluster.producers[0].config
    assert config["enable.idempotence"] == "true" and config["acks"] == "all"
    assert config["allow.auto.create.topics"] == "false"
    assert config["queue.buffering.max.kbytes"] == "65536"
    assert callable(config["error_cb"])

    override = kafka_config(client_config={"queue.buffering.max.kbytes": 1024})
    make_producer(cluster, override)
    assert cluster.producers[1].config["queue.buffering.max.kbytes"] == "1024"


def test_flush_waits_for_the_message_timeout_plus_grace():
    cluster = FakeCluster()
    assert make_producer(cluster).flush_timeout_s == 305.0  # librdkafka default 300 s
    config = kafka_config(client_config={"message.timeout.ms": "20000"})
    assert make_producer(cluster, config).flush_timeout_s == 25.0


# -- sending, back-pressure, accounting -----------------------------------------------


def test_full_queue_waits_for_acknowledgements_instead_of_buffering():
    cluster = FakeCluster(acks_per_poll=3)
    producer = make_producer(cluster, capacity=10)
    for i in range(1000):
        producer.send("t", i % 4, b"k%d" % i, b"v" * 10)
    fake = cluster.producers[0]
    assert fake.buffer_errors > 0
    assert fake.max_queued == 10
    producer.flush()
    assert sum(stats.messages for stats in producer.delivered.values()) == 1000
    assert producer.sent == 1000


def test_delivered_counts_messages_and_key_plus_value_bytes_per_partition():
    cluster = FakeCluster()
    producer = make_producer(cluster)
    producer.send("a", 0, b"key", b"value")  # 8 bytes
    producer.send("a", 0, None, b"xy")  # 2
    producer.send("a", 1, b"", None)  # 0
    producer.send("b", 0, b"k", b"v")  # 2
    producer.flush()
    assert producer.delivered == {
        ("a", 0): PartitionStats(messages=2, bytes=10),
        ("a", 1): PartitionStats(messages=1, bytes=0),
        ("b", 0): PartitionStats(messages=1, bytes=2),
    }


def test_delivery_failure_fails_flush_with_the_broker_error():
    error = KafkaError(KafkaError.NOT_ENOUGH_REPLICAS, "Broker: Not enough in-sync replicas")
    cluster = FakeCluster(failing_partitions={("t", 1): error})
    producer = make_producer(cluster, kafka_config(client_config={"sasl.password": SECRET}))
    for i in range(10):
        producer.send("t", i % 2, None, b"v")
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    text = str(info.value)
    assert "5 of 10 messages were not delivered" in text
    assert "topic t partition 1" in text and "Not enough in-sync replicas" in text
    assert "NOT_ENOUGH_REPLICAS" in text and BROKERS in text
    assert SECRET not in text
    assert producer.delivered == {("t", 0): PartitionStats(5, 5)}


def test_send_after_a_failed_delivery_fails_at_once():
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    cluster = FakeCluster(failing_partitions={("t", 0): error}, acks_per_poll=1)
    producer = make_producer(cluster, capacity=1)
    producer.send("t", 0, None, b"v")
    with pytest.raises(DeliveryError, match="_MSG_TIMED_OUT"):
        producer.send("t", 0, None, b"v")  # queue full -> poll -> failure seen


def test_messages_still_queued_after_flush_timeout_fail_flush():
    cluster = FakeCluster(stuck=True)
    producer = make_producer(cluster, flush_timeout_s=0.01)
    producer.send("t", 0, None, b"v")
    producer.send("t", 1, None, b"v")
    fake = cluster.producers[0]
    fake.config["error_cb"](KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"))
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    text = str(info.value)
    assert "2 of 2 messages to topics t were not acknowledged by Kafka brokers " + BROKERS in text
    assert "1/1 brokers are down" in text


def test_queue_that_never_drains_fails_send_after_the_flush_timeout():
    cluster = FakeCluster(stuck=True)
    producer = make_producer(cluster, capacity=2, flush_timeout_s=0.01)
    producer.send("t", 0, None, b"v")
    producer.send("t", 0, None, b"v")
    with pytest.raises(DeliveryError, match="2 of 2 messages to topics t were not acknowledged"):
        producer.send("t", 0, None, b"v")
    assert cluster.producers[0].max_queued == 2


def test_fatal_client_error_fails_the_next_send():
    cluster = FakeCluster()
    producer = make_producer(cluster)
    fatal = KafkaError(KafkaError._FATAL, "Producer fenced", fatal=True)
    cluster.producers[0].config["error_cb"](fatal)
    with pytest.raises(DeliveryError, match="the Kafka producer failed on brokers"):
        producer.send("t", 0, None, b"v")


def test_close_drops_unacknowledged_messages_and_is_idempotent():
    cluster = FakeCluster(stuck=True)
    with make_producer(cluster) as producer:
        producer.send("t", 0, None, b"v")
    fake = cluster.producers[0]
    assert fake.purged and fake.closed and len(fake) == 0
    producer.close()


def test_send_many_queues_like_send_and_waits_for_room():
    cluster = FakeCluster(acks_per_poll=1)
    producer = make_producer(cluster, capacity=2)
    producer.send_many("t", 1, b"", [b"a", b"bb", b"ccc", b"dddd"])
    assert producer.sent == 4
    producer.flush()
    assert producer.delivered == {("t", 1): PartitionStats(4, 10)}
    assert cluster.producers[0].max_queued == 2


def test_send_many_with_a_key_each():
    cluster = FakeCluster()
    producer = make_producer(cluster)
    producer.send_many("t", 2, b"ignored", [b"a", None, b"ccc"], keys=[b"k1", b"k22", None])
    produced = [(m.partition(), m.key(), m.value()) for m, _ in cluster.producers[0].queue]
    assert produced == [(2, b"k1", b"a"), (2, b"k22", None), (2, None, b"ccc")]
    producer.flush()
    assert producer.sent == 3
    assert producer.delivered == {("t", 2): PartitionStats(3, 4 + 5)}


def test_send_many_with_a_partition_each_counts_each_partition():
    cluster = FakeCluster(acks_per_poll=1)
    producer = make_producer(cluster, capacity=2)
    producer.send_many("t", [1, 0, 1, 2], b"k", [b"a", b"bb", None, b"dddd"])
    assert producer.sent == 4
    producer.flush()
    assert producer.delivered == {
        ("t", 0): PartitionStats(1, 3),
        ("t", 1): PartitionStats(2, (1 + 1) + (0 + 1)),
        ("t", 2): PartitionStats(1, 5),
    }


def test_send_many_with_a_partition_each_stops_counting_at_a_refused_message():
    cluster = FakeCluster(topics={"t": 3})
    producer = make_producer(cluster)
    assert producer.partition_count("t") == 3
    cluster.topics["t"] = 2  # the topic was recreated with two partitions
    with pytest.raises(DeliveryError, match="has no partition 2 now"):
        producer.send_many("t", [0, 1, 2, 0], None, [b"a", b"bb", b"c", b"d"])
    assert producer.sent == 2
    assert producer.delivered == {("t", 0): PartitionStats(1, 1), ("t", 1): PartitionStats(1, 2)}


def test_partition_counts_of_many_topics_take_one_lookup_and_one_create():
    cluster = FakeCluster(topics={f"t{i}": 5 for i in range(0, 200, 2)})
    producer = make_producer(cluster)
    topics = [f"t{i}" for i in range(200)]
    counts = producer.partition_counts([*topics, "t0"])
    assert counts == {t: 5 if int(t[1:]) % 2 == 0 else 3 for t in topics}
    (admin,) = cluster.admins
    assert admin.create_calls == 1
    assert sorted(new.topic for new in admin.created) == sorted(topics[1::2])
    # One request found the existing topics and one showed the created ones.
    assert len(cluster.producers[0].metadata_timeouts) == 2
    assert producer.partition_count("t7") == 3  # cached: no more requests
    assert len(cluster.producers[0].metadata_timeouts) == 2


def test_partition_counts_refuse_missing_topics_without_auto_create():
    cluster = FakeCluster(topics={"a": 1})
    producer = make_producer(cluster, kafka_config(auto_create_topic=False))
    with pytest.raises(DeliveryError, match="topic b does not exist .* auto-create-topic"):
        producer.partition_counts(["a", "b", "c"])
    assert cluster.admins == []


def test_send_many_after_a_failed_delivery_fails_at_once():
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    cluster = FakeCluster(failing_partitions={("t", 0): error}, acks_per_poll=1)
    producer = make_producer(cluster, capacity=1)
    with pytest.raises(DeliveryError, match="_MSG_TIMED_OUT"):
        producer.send_many("t", 0, None, [b"v", b"v"])  # queue full -> poll -> failure seen


def test_failure_only_delivery_reports_cannot_be_turned_off():
    cluster = FakeCluster()
    config = kafka_config(client_config={"delivery.report.only.error": "false"})
    make_producer(cluster, config)
    assert cluster.producers[0].config["delivery.report.only.error"] is True


# -- broker faults end as DeliveryError (issue 13, item 5) -----------------------------------


def test_an_exception_inside_a_delivery_callback_is_raised_after_flush():
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    cluster = FakeCluster(failing_partitions={("t", 0): error}, broken_messages=True)
    producer = make_producer(cluster)
    producer.send("t", 0, None, b"v")
    producer.send("t", 0, None, b"v")
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    text = str(info.value)
    assert text.startswith(f"ticdc: handling a delivery report from Kafka brokers {BROKERS}")
    assert "topics t" in text and "SystemError" in text
    assert isinstance(info.value.__cause__, SystemError)


def test_a_partition_gone_from_the_topic_fails_the_send_naming_topic_and_brokers():
    cluster = FakeCluster(topics={"t": 3})
    producer = make_producer(cluster)
    assert producer.partition_count("t") == 3
    cluster.topics["t"] = 1  # the topic was recreated with one partition
    with pytest.raises(DeliveryError) as info:
        producer.send("t", 2, None, b"v")
    assert str(info.value) == (
        f"ticdc: topic t on Kafka brokers {BROKERS} has no partition 2 now (it had 3 when this "
        "task started): it was recreated or changed while the task wrote; the task fails, and "
        "a retry routes by the topic's partition count then"
    )
    with pytest.raises(DeliveryError, match="has no partition 2 now"):
        producer.send_many("t", 2, None, [b"v"])


def test_flush_stops_at_the_first_failed_message():
    error = KafkaError(KafkaError._UNKNOWN_PARTITION, "Local: Unknown partition")
    cluster = FakeCluster(failing_partitions={("t", 1): error}, stuck_partitions={("t", 0)})
    producer = make_producer(cluster)  # flush would wait 305 s for partition 0
    for i in range(4):
        producer.send("t", i % 2, None, b"v")
    started = time.monotonic()
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    assert time.monotonic() - started < 60
    text = str(info.value)
    assert "first failure: topic t partition 1: Local: Unknown partition" in text
    assert "2 more were still unacknowledged" in text
    assert len(cluster.producers[0].flush_timeouts) == 1


# -- partition-num on an existing topic follows TiCDC (issue 13, item 8) ----------------------


def test_partition_num_smaller_than_the_default_topic_is_used():
    cluster = FakeCluster(topics={"orders": 6, "other": 6})
    producer = make_producer(cluster, kafka_config(partition_num=4, default_topic="orders"))
    assert producer.partition_count("orders") == 4
    assert producer.partition_count("other") == 6  # topics of expressions keep their count


def test_partition_num_larger_than_the_default_topic_is_an_error():
    cluster = FakeCluster(topics={"orders": 2})
    producer = make_producer(cluster, kafka_config(partition_num=4, default_topic="orders"))
    with pytest.raises(ConfigError) as info:
        producer.partition_count("orders")
    assert str(info.value) == (
        f"ticdc: option 'partition-num' is 4, more than the 2 partitions of topic orders on "
        f"Kafka brokers {BROKERS}; TiCDC refuses this too: set partition-num to at most 2, or "
        "add partitions to the topic"
    )


def test_without_partition_num_the_default_topic_keeps_its_count():
    cluster = FakeCluster(topics={"orders": 6})
    producer = make_producer(cluster, kafka_config(default_topic="orders"))
    assert producer.partition_count("orders") == 6


# -- librdkafka's log goes through Python logging (issue 13, item 11) -------------------------


def test_librdkafka_lines_go_to_python_logging_at_quiet_levels(caplog):
    cluster = FakeCluster()
    make_producer(cluster)
    log = cluster.producers[0].config["logger"]
    caplog.set_level(logging.DEBUG, logger="ticdc_sink.librdkafka")
    fail = "[thrd:b:9092/1]: b:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection refused"
    log.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", fail)
    confwarn = "[thrd:app]: Configuration property enable.auto.commit is a consumer property"
    log.log(logging.WARNING, "%s [%s] %s", "CONFWARN", "rdkafka#producer-1", confwarn)
    log.log(logging.INFO, "%s [%s] %s", "PARTCNT", "rdkafka#producer-1", "[thrd:main]: count")
    levels = [(r.levelno, r.getMessage().split()[0]) for r in caplog.records]
    assert levels == [
        (logging.INFO, "FAIL"),
        (logging.WARNING, "CONFWARN"),
        (logging.DEBUG, "PARTCNT"),
    ]
    assert {r.name for r in caplog.records} == {"ticdc_sink.librdkafka"}


# -- the kafka.* settings are checked on the driver (issue 13, item 9) ------------------------


def check(**client: str) -> tuple[str, ...]:
    return check_client_config(kafka_config(client_config=client))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"bootstrap.server": "b:9092"},
            "option 'kafka.bootstrap.server' is unknown to librdkafka, the Kafka client; did you "
            "mean 'kafka.bootstrap.servers'?",
        ),
        ({"lingr.ms": "5"}, "did you mean 'kafka.linger.ms'?"),
        ({"zzzz.qqq": "5"}, "see https://github.com/confluentinc/librdkafka"),
        (
            {"acks": "two"},
            "option 'kafka.acks' is refused by librdkafka, the Kafka client: Invalid value for "
            'configuration property "request.required.acks"',
        ),
        ({"linger.ms": "-5"}, "option 'kafka.linger.ms' is refused by librdkafka"),
        ({"compression.type": "brotli"}, "option 'kafka.compression.type' is refused"),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"},
            "librdkafka, the Kafka client, refuses the kafka.* settings: sasl.username and "
            "sasl.password must be set",
        ),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "NOPE"},
            "Unsupported SASL mechanism: NOPE",
        ),
    ],
)
def test_settings_librdkafka_refuses_are_config_errors_naming_the_option(settings, expected):
    with pytest.raises(ConfigError) as info:
        check(**settings, **{"sasl.password": SECRET})
    assert expected in str(info.value)
    assert SECRET not in str(info.value)


def test_file_settings_are_left_to_the_tasks_and_warnings_are_returned():
    # The CA file may exist only where the tasks run (spark-submit --files).
    assert check(**{"security.protocol": "SSL", "ssl.ca.location": "/only/on/executors"}) == ()
    warnings = check(**{"enable.auto.commit": "false"})
    assert warnings == (
        "Configuration property enable.auto.commit is a consumer property and will be ignored "
        "by this producer instance",
    )


def test_every_suggested_setting_is_known_to_librdkafka():
    for name in producer_module._KNOWN_SETTINGS:
        try:
            confluent_kafka.Producer({name: "\x00not-a-value"})
        except KafkaException as exc:
            assert "No such configuration property" not in str(exc), name


def test_every_java_setting_the_options_refuse_is_one_librdkafka_lacks():
    from ticdc_sink.config.sink import JAVA_SETTINGS

    for name in JAVA_SETTINGS:
        with pytest.raises(KafkaException) as info:
            confluent_kafka.Producer({name: "x"})
        text = str(info.value)
        assert "No such configuration property" in text or "Java" in text, name


# -- what Kafka enforces: max.message.bytes on record batches, min.insync.replicas, acks ----


def test_a_topic_limit_below_the_batch_size_makes_batches_that_fit():
    # librdkafka fills record batches up to batch.size (1,000,000) and Kafka checks the
    # topic's max.message.bytes against a whole batch: a small limit needs small batches.
    cluster = FakeCluster(
        topics={"big": 1, "small": 1}, topic_configs={"small": {"max.message.bytes": "10000"}}
    )
    producer = make_producer(cluster)
    assert producer.partition_count("big") == 1
    producer.send("big", 0, None, b"v" * 900)
    assert len(cluster.producers) == 1 and "batch.size" not in cluster.producers[0].config
    assert producer.partition_count("small") == 1
    first, second = cluster.producers
    # What was sent before was delivered by the first producer, which was then closed.
    assert first.flush_timeouts and first.closed and not first.queue
    assert second.config["batch.size"] == 10_000 - 128 - 100
    producer.send("small", 0, None, b"v" * 900)
    producer.flush()
    assert producer.delivered == {
        ("big", 0): PartitionStats(1, 900),
        ("small", 0): PartitionStats(1, 900),
    }
    # A larger limit keeps the smaller batches.
    cluster.topics["large"] = 1
    cluster.topic_configs["large"] = {"max.message.bytes": "5000000"}
    producer.partition_count("large")
    assert len(cluster.producers) == 2


def test_a_lost_describe_configs_answer_is_asked_again():
    cluster = FakeCluster(
        topics={"small": 1},
        topic_configs={"small": {"max.message.bytes": "10000"}},
        describe_errors=[KafkaError(KafkaError._TRANSPORT, "Broker transport failure")],
    )
    producer = make_producer(cluster)
    producer.partition_count("small")
    assert producer.topic_max_message_bytes("small") == 10_000
    assert cluster.producers[-1].config["batch.size"] == 10_000 - 128 - 100


def test_a_broker_refusing_a_message_as_too_large_names_size_topic_partition_and_limit():
    error = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Broker: Message size too large")
    cluster = FakeCluster(
        topics={"t": 2},
        topic_configs={"t": {"max.message.bytes": "20000"}},
        failing_partitions={("t", 1): error},
    )
    producer = make_producer(cluster, kafka_config(client_config={"sasl.password": SECRET}))
    producer.partition_count("t")
    producer.send("t", 1, b"key", b"v" * 30_000)
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    first_line = str(info.value).splitlines()[0]
    assert (
        f"Kafka brokers {BROKERS} refused a message of 30003 bytes (key and value) for topic t "
        "partition 1 as too large: the topic's max.message.bytes is 20000"
    ) in first_line
    assert "MSG_SIZE_TOO_LARGE" in first_line and "1 of 1 messages" in first_line
    assert SECRET not in first_line


def test_acks_all_to_a_partition_short_of_in_sync_replicas_fails_before_sending():
    cluster = FakeCluster(
        topics={"t": 2}, topic_configs={"t": {"min.insync.replicas": "2"}}, in_sync={"t": (1, 3)}
    )
    with pytest.raises(DeliveryError) as info:
        make_producer(cluster).partition_count("t")
    assert str(info.value).startswith(
        f"ticdc: partition 0 of topic t on Kafka brokers {BROKERS} has 1 in-sync replica(s) of "
        "3, fewer than the topic's min.insync.replicas 2: Kafka refuses writes with acks=all "
        "(NOT_ENOUGH_REPLICAS)"
    )
    # acks=1 does not need them; Kafka caps min.insync.replicas at the replica count.
    assert make_producer(cluster, kafka_config(client_config={"acks": "1"})).partition_count("t")
    cluster.in_sync["t"] = (1, 1)
    assert make_producer(cluster).partition_count("t") == 2


def test_a_delivery_timeout_behind_missing_in_sync_replicas_says_so():
    # Replicas fall out of sync while the task writes: Kafka answers NOT_ENOUGH_REPLICAS,
    # librdkafka retries until message.timeout.ms and reports a timeout.
    cluster = FakeCluster(topics={"t": 1}, topic_configs={"t": {"min.insync.replicas": "2"}})
    producer = make_producer(cluster)
    producer.partition_count("t")
    producer.send("t", 0, None, b"v")
    cluster.in_sync["t"] = (1, 2)
    cluster.failing_partitions[("t", 0)] = KafkaError(KafkaError._MSG_TIMED_OUT)
    with pytest.raises(DeliveryError) as info:
        producer.flush()
    text = str(info.value)
    assert text.startswith("ticdc: partition 0 of topic t on Kafka brokers")
    assert "fewer than the topic's min.insync.replicas 2" in text
    assert "first failure: topic t partition 0: " in text and "_MSG_TIMED_OUT" in text


@pytest.mark.parametrize(
    ("options", "idempotence", "acks"),
    [
        ({}, "true", "all"),
        ({"kafka.acks": "1"}, "false", "1"),
        ({"kafka.acks": "0", "kafka.enable.idempotence": "false"}, "false", "0"),
        ({"sink-uri": "kafka://b:9092/t?required-acks=1&max-retry=0"}, "false", "1"),
        ({"sink-uri": "kafka://b:9092/t?required-acks=-1"}, "true", "all"),
    ],
)
def test_acks_below_all_turn_idempotence_off_unless_it_is_asked_for(options, idempotence, acks):
    config = SinkConfig.from_options({"kafka.bootstrap.servers": "b:9092", "topic": "t", **options})
    settings = producer_settings(config.kafka)
    assert (settings["enable.idempotence"], settings["acks"]) == (idempotence, acks)
    assert check_client_config(config.kafka) == ()  # librdkafka takes them


@pytest.mark.parametrize(
    "options",
    [
        {"kafka.acks": "1", "kafka.enable.idempotence": "true"},
        {"sink-uri": "kafka://b:9092/t?required-acks=0", "kafka.enable.idempotence": "true"},
    ],
)
def test_idempotence_asked_for_with_fewer_acks_is_refused_naming_both(options):
    with pytest.raises(ConfigError) as info:
        SinkConfig.from_options({"kafka.bootstrap.servers": "b:9092", "topic": "t", **options})
    text = str(info.value)
    assert "and kafka.enable.idempotence is true" in text
    assert "set kafka.acks=all (sink-uri required-acks=-1)" in text
    assert info.value.option == "kafka.acks"
