"""Broker faults through a TCP proxy (tests/support/proxy.py) between the sink's producers
and Kafka (a broker of the module's own, `ProxiedKafka`): connections cut again and again
during a 200k-row write, and a broker that stops answering for longer than the delivery
timeout."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.kafka import ProxiedKafka
from ticdc_sink import tso
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedBootstrap, DecodedRow, DecodedWatermark
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

KEYS = 50_000
EVENTS_PER_KEY = 4  # INSERT, UPDATE, UPDATE, DELETE
BASE_TS = tso.compose(1_700_000_000_000)


@pytest.fixture(scope="module")
def proxied() -> Iterator[ProxiedKafka]:
    with ProxiedKafka() as running:
        yield running


@pytest.fixture
def proxy(proxied: ProxiedKafka) -> Iterator[Any]:
    yield proxied.proxy
    proxied.proxy.cut_every()
    proxied.proxy.cut_each_connection_after(None)
    proxied.proxy.resume()


def change_stream(spark: Any, keys: int) -> Any:
    """`keys` keys, each inserted, updated twice and deleted; event n of key k has commit
    ts BASE_TS + n * keys + k. Partitioned by key and sorted by commit ts, as
    docs/guides/delivery.md asks for per-key order."""
    from pyspark.sql import functions as F

    seq = F.expr(f"n DIV {keys}")
    return (
        spark.range(keys * EVENTS_PER_KEY)
        .withColumnRenamed("id", "n")
        .select(
            F.when(seq == 0, "c").when(seq == EVENTS_PER_KEY - 1, "d").otherwise("u").alias("_op"),
            (F.lit(BASE_TS) + F.col("n")).alias("_commit_ts"),
            (F.col("n") % keys).alias("id"),
            F.concat(F.lit("value-"), seq.cast("string"), F.lit("-"), F.col("n")).alias("name"),
        )
        .repartition(4, "id")
        .sortWithinPartitions("_commit_ts")
    )


def write(df: Any, bootstrap: str, topic: str, **options: str) -> None:
    writer = (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("database", "shop")
        .option("table", "items")
        .option("primary-key", "id")
        .option("partition", "index-value")
        .option("partition-num", "3")
        # The fault schedules count bytes on the wire: uncompressed, the 200k-row write
        # moves ~70 MB (lz4, the default, would leave a few MB).
        .option("kafka.compression.type", "none")
    )
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def test_connections_cut_during_a_200k_row_write_lose_nothing_and_keep_key_order(
    spark: Any, proxied: ProxiedKafka, proxy: Any
) -> None:
    topic = "faults_cut"
    df = change_stream(spark, KEYS)
    # Cut every connection each time ~6 MB went through: the write moves ~70 MB.
    proxy.cut_every(nbytes=6_000_000)
    write(df, proxied.bootstrap, topic)
    proxy.cut_every()
    assert proxy.cuts >= 5, f"only {proxy.cuts} cuts"

    records = proxied.consume_all(topic, timeout=180)
    decoder = SimpleDecoder()
    seen: set[tuple[int, bytes | None, bytes | None]] = set()
    copies: Counter[str] = Counter()
    events_by_key: dict[int, list[tuple[int, int, Op]]] = defaultdict(list)
    watermarks: Counter[int] = Counter()
    bootstraps: Counter[int] = Counter()
    for record in records:
        # What a consumer does: drop a message whose (partition, key, value) it has seen.
        identity = (record.partition, record.key, record.value)
        event = decoder.decode_message(record.key, record.value)
        if identity in seen:
            copies[type(event).__name__] += 1
            continue
        seen.add(identity)
        if isinstance(event, DecodedRow):
            image = event.old if event.op is Op.DELETE else event.data
            events_by_key[image["id"]].append((record.partition, event.commit_ts, event.op))
        elif isinstance(event, DecodedWatermark):
            assert event.commit_ts == BASE_TS + KEYS * EVENTS_PER_KEY - 1
            watermarks[record.partition] += 1
        else:
            assert isinstance(event, DecodedBootstrap)
            bootstraps[record.partition] += 1

    # Every row is there once, each key's events in one partition and in commit ts order:
    # nothing lost, nothing reordered, and no row twice, since Kafka drops the idempotent
    # producer's resends after a cut. The only copies are the BOOTSTRAPs each task repeats
    # (send-bootstrap-in-msg-count), byte-identical by design.
    assert set(copies) <= {"DecodedBootstrap"}, copies
    assert len(events_by_key) == KEYS
    ops = [Op.INSERT, Op.UPDATE, Op.UPDATE, Op.DELETE]
    for key, events in events_by_key.items():
        partitions = {p for p, _, _ in events}
        assert len(partitions) == 1, (key, events)
        assert [(ts, op) for _, ts, op in events] == [
            (BASE_TS + n * KEYS + key, ops[n]) for n in range(EVENTS_PER_KEY)
        ], key
    # One watermark per partition, after every row of the batch.
    assert watermarks == Counter({0: 1, 1: 1, 2: 1})
    assert set(bootstraps) == {0, 1, 2}
    print(f"{proxy.cuts} cuts, {proxy.connections} connections, byte-identical copies {copies}")


def test_a_stalled_broker_fails_the_write_within_the_delivery_timeout_and_sends_no_watermark(
    spark: Any, proxied: ProxiedKafka, proxy: Any, tmp_path: Any
) -> None:
    topic = "faults_stall"
    df = change_stream(spark, 10_000)
    checkpoint = tmp_path / "chk"
    # The broker stops answering once the write is under way (topic made, rows flowing)
    # and stays silent much longer than the 3 s delivery timeout.
    proxy.stall_after(2_000_000)
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        write(
            df,
            proxied.bootstrap,
            topic,
            **{
                "kafka.message.timeout.ms": "3000",
                "broker-timeout-ms": "3000",
                "checkpointLocation": str(checkpoint),
            },
        )
    elapsed = time.monotonic() - started
    assert proxy.stalled
    proxy.resume()

    text = str(info.value)
    assert "DeliveryError" in text
    assert f"Kafka brokers {proxied.bootstrap}" in text
    # Whichever task hits the stall first fails the job: one waiting for acknowledgements,
    # or one that started late and is still reading the topic's metadata. Both are bounded.
    assert (
        "Message timed out" in text
        or "not acknowledged" in text
        or "within broker-timeout-ms 3000" in text
    ), text
    # Bounded by the 3 s delivery timeout, not librdkafka's default of 300 s: with the
    # producer's flush grace (5 s) and Spark's own start and teardown of the job, about 9 s
    # here; the stall itself never ends on its own. The bound leaves room for a loaded
    # machine and still tells the two apart.
    assert elapsed < 150, elapsed

    decoder = SimpleDecoder()
    events = [decoder.decode_message(r.key, r.value) for r in proxied.consume_all(topic)]
    assert any(isinstance(e, DecodedRow) for e in events)  # rows before the stall landed
    assert not any(isinstance(e, DecodedWatermark) for e in events)
    assert not (checkpoint / "ticdc" / "watermark").exists()


def test_metadata_reads_and_topic_creation_ride_out_cut_connections(
    proxied: ProxiedKafka, proxy: Any
) -> None:
    # A task's first broker calls (partition count, creating the topic) while every
    # connection drops after three answers (its ApiVersions handshake and two more), losing
    # whatever else was in flight: each lost answer is asked again within broker-timeout-ms.
    # Paced by answers, not by the clock, the faults are the same on a slow machine. (After
    # two answers librdkafka's admin client never reaches its controller: it asks for
    # metadata on the new connection before it sends CreateTopics.)
    from ticdc_sink.config import KafkaConfig
    from ticdc_sink.producer import KafkaProducer

    proxied.create_topic("faults_meta_existing", 2)
    proxy.cut_each_connection_after(3)
    for i in range(20):
        config = KafkaConfig(
            bootstrap_servers=proxied.bootstrap, broker_timeout_ms=10_000, partition_num=2
        )
        with KafkaProducer(config) as producer:
            assert producer.partition_count("faults_meta_existing") == 2
            assert producer.partition_count(f"faults_meta_new_{i}") == 2
            producer.send(f"faults_meta_new_{i}", 1, b"", b"x")
            producer.flush()
    proxy.cut_each_connection_after(None)
    # At least the connection that created each round's topic (ApiVersions, Metadata,
    # CreateTopics) was cut; about 80 connections of 170 are.
    assert proxy.cuts >= 20, proxy.cuts
    assert [(r.partition, r.value) for r in proxied.consume_all("faults_meta_new_19")] == [
        (1, b"x")
    ]
