"""The test-only data source of tests/support/faults.py: its faults, and that it hands
every other option to `ticdc` unchanged."""

from __future__ import annotations

import pickle

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.support import faults
from tests.support.fake_kafka import FakeClient, FakeCluster, kafka_config
from tests.support.faults import FailFirstAttempt, FailingProducer, FaultsDataSource
from ticdc_sink.producer import KafkaProducer

SCHEMA = StructType([StructField("_op", StringType()), StructField("id", LongType())])
OPTIONS = {
    "kafka.bootstrap.servers": "127.0.0.1:1",
    "topic": "t",
    "database": "shop",
    "table": "users",
    "primary-key": "id",
}


def test_the_failing_producer_fails_after_acknowledged_sends() -> None:
    # The failure comes after the broker acknowledged the first n messages, so a retry
    # really re-sends delivered messages.
    cluster = FakeCluster(topics={"t": 1}, acks_per_poll=0)
    producer = FailingProducer(
        kafka_config(), factory=lambda conf: FakeClient(conf, cluster), fail_after=3
    )
    producer.send("t", 0, b"", b"1")
    producer.send("t", 0, b"", b"2")
    with pytest.raises(RuntimeError, match="injected test failure after 3 acknowledged"):
        producer.send("t", 0, b"", b"3")
    assert producer.delivered[("t", 0)].messages == 3
    producer.close()


def test_the_failing_producer_fails_in_the_middle_of_a_bulk_send() -> None:
    # The column-wise path sends with send_many: the fault still comes after exactly
    # `fail_after` acknowledged messages, the rest of the bulk never sent.
    cluster = FakeCluster(topics={"t": 2}, acks_per_poll=0)
    producer = FailingProducer(
        kafka_config(), factory=lambda conf: FakeClient(conf, cluster), fail_after=3
    )
    producer.send_many("t", [0, 1], None, [b"1", b"2"])
    with pytest.raises(RuntimeError, match="injected test failure after 3 acknowledged"):
        producer.send_many("t", [1, 0, 1], None, [b"3", b"4", b"5"])
    assert producer.sent == 3
    assert producer.delivered[("t", 0)].messages == 1
    assert producer.delivered[("t", 1)].messages == 2
    producer.close()


def test_the_fault_options_are_taken_and_every_other_goes_to_ticdc() -> None:
    # An option `ticdc` does not know would fail the plan: the fault options never reach it.
    source = FaultsDataSource({**OPTIONS, "Fail-First-Attempt": "5", "hang-after-commit": "1"})
    writer = source.writer(SCHEMA, False)
    assert writer.producer_factory == FailFirstAttempt(5)
    assert writer.plan.config.kafka.bootstrap_servers == "127.0.0.1:1"

    plain = FaultsDataSource(OPTIONS).writer(SCHEMA, False)
    assert plain.producer_factory is KafkaProducer


def test_a_stream_writer_that_hangs_is_the_same_writer_with_another_commit() -> None:
    source = FaultsDataSource({**OPTIONS, "queryName": "q", "hang-after-commit": "1"})
    writer = source.streamWriter(SCHEMA, False)
    expected = getattr(faults, "HangingStreamWriter", faults.HangingStreamRowWriter)
    assert type(writer) is expected and writer.hang_batch == 1
    # Spark's workers unpickle it by reference: this module, importable from the root.
    assert type(pickle.loads(pickle.dumps(writer))) is expected
    writer.commit([], 0)  # another micro-batch's commit returns
