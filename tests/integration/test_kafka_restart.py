"""Apache Kafka killed (SIGKILL) and restarted on the same log directory in the middle of a
streaming write and of a streaming read. Kills are paced by data, never by the clock: the
stream's third micro-batch carries BIG rows, and the broker is killed once the topic holds
some of them (a write) or once the reader has planned that micro-batch and not finished it
(from its checkpoint).

What a user sees, each way:
- timeouts longer than the outage (`broker-timeout-ms` and `kafka.message.timeout.ms` for
  a write, `kafkaConsumer.pollTimeoutMs` for a read): the query rides it out;
- shorter ones: the query fails with a DeliveryError naming the brokers; started again from
  its checkpoint once the broker is back, it goes on where it stopped, re-running the
  micro-batch that failed.
Either way every input row is in the topic, every copy of a message (a re-run micro-batch)
equals the first byte for byte, watermarks never go backwards, and a streaming read's
output (Spark's file sink) holds every row exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from pyspark.errors import StreamingQueryException

from tests.support.ids import assert_same_ids
from tests.support.kafka import KafkaBroker
from tests.support.proxy import wait_until
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark
from ticdc_sink.errors import DeliveryError

pytestmark = pytest.mark.integration

SMALL = 100
BIG = 200_000
SIZES = [SMALL, SMALL, BIG, SMALL, SMALL]  # rows of each micro-batch (one file each)
# Long enough for the broker to start again on a loaded machine, or short: fails first.
RIDE_OUT = {"broker-timeout-ms": "300000", "kafka.message.timeout.ms": "300000"}
GIVE_UP = {"broker-timeout-ms": "5000", "kafka.message.timeout.ms": "5000"}


@pytest.fixture(scope="module")
def kafka_restarts() -> Iterator[KafkaBroker]:
    with KafkaBroker() as running:
        yield running


def source_files(source: Path) -> set[int]:
    """One JSON file per micro-batch, SIZES rows each (INSERTs, id n * 1e6 + i); the ids."""
    source.mkdir()
    ids = set()
    for n, rows in enumerate(SIZES):
        records = [{"_op": "c", "id": n * 1_000_000 + i, "name": f"r{n}-{i}"} for i in range(rows)]
        (source / f"part-{n:03}.json").write_text("\n".join(json.dumps(r) for r in records))
        ids.update(r["id"] for r in records)
    return ids


def start_write(
    spark: Any, kafka: KafkaBroker, source: Path, checkpoint: Path, topic: str, **options: str
) -> Any:
    """The file stream in `source` (a micro-batch per file) written to `topic`."""
    stream = (
        spark.readStream.schema("_op string, id bigint, name string")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
    )
    writer = (
        stream.writeStream.format("ticdc")
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("partition-num", "2")
        .option("partition", "index-value")
        .option("database", "shop")
        .option("table", "items")
        .option("primary-key", "id")
    )
    for name, value in options.items():
        writer = writer.option(name, value)
    return writer.start()


def finish(query: Any) -> BaseException | None:
    """Run the query until it processed everything there is; its error if it failed."""
    try:
        query.processAllAvailable()
        return None
    except StreamingQueryException as exc:
        return exc
    finally:
        query.stop()


def kill_during(
    kafka: KafkaBroker,
    query: Any,
    ready: Callable[[], bool],
    what: str,
    *,
    restart_at_once: bool,
) -> BaseException | None:
    """SIGKILL the broker once `ready()` holds, while `query` runs; restart it at once
    (the query rides the outage out) or only after the query has ended (it gave up). The
    query's error, if any; the broker is up again on return."""
    down = False
    try:
        wait_until(ready, 600, what=what)
        kafka.kill()
        down = True
        if restart_at_once:
            kafka.restart()
            down = False
        return finish(query)
    finally:
        if down:
            kafka.restart()


def holds(kafka: KafkaBroker, topic: str, messages: int) -> bool:
    """Whether `topic` holds at least `messages` messages."""
    try:
        return sum(kafka.end_offsets(topic, timeout=10).values()) >= messages
    except (DeliveryError, KafkaException):  # not created yet
        return False


def delivery_error(error: BaseException | None) -> str:
    """The DeliveryError line of a failed query's error (what the user reads first)."""
    lines = [line for line in str(error).splitlines() if "DeliveryError" in line]
    assert lines, error
    print("the query failed:", lines[-1].strip())
    return lines[-1]


def check_topic(kafka: KafkaBroker, topic: str, ids: set[int]) -> int:
    """Every id is in the topic, each copy of a row's message byte-identical to the first
    (partition, key and value), watermarks never backwards; the number of copies."""
    decoder = SimpleDecoder()
    found: dict[int, list[Any]] = {}
    watermarks: dict[int, list[int]] = {}
    for record in kafka.consume_all(topic, timeout=300):
        event = decoder.decode_message(record.key, record.value)
        if isinstance(event, DecodedRow):
            found.setdefault(int(event.data["id"]), []).append(record)
        elif isinstance(event, DecodedWatermark):
            watermarks.setdefault(record.partition, []).append(event.commit_ts)
    try:
        assert_same_ids(found, ids, f"topic {topic}")
    except AssertionError as missing:
        ends = kafka.end_offsets(topic)
        raise AssertionError(f"{missing}\nends {ends}; the broker's log:\n{kafka.log()}") from None
    for records in found.values():
        first = records[0]
        assert {(r.partition, r.key, r.value) for r in records} == {
            (first.partition, first.key, first.value)
        }
    assert set(watermarks) == {0, 1}
    assert all(marks == sorted(marks) for marks in watermarks.values())
    copies = sum(len(records) - 1 for records in found.values())
    print(f"{copies} copies of rows in {topic}")
    return copies


@pytest.mark.parametrize("survives", [True, False], ids=["rides-out", "resumes"])
def test_a_streaming_write_across_a_broker_kill_loses_nothing_and_replays_identically(
    spark: Any, kafka_restarts: KafkaBroker, tmp_path: Path, survives: bool
) -> None:
    kafka = kafka_restarts
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    topic = f"restart_write_{'rides' if survives else 'resumes'}"
    ids = source_files(source)
    options = RIDE_OUT if survives else GIVE_UP
    query = start_write(spark, kafka, source, checkpoint, topic, **options)
    # Inside the BIG micro-batch: the topic holds some of its rows.
    error = kill_during(
        kafka,
        query,
        lambda: holds(kafka, topic, 2 * SMALL + 5_000),
        "rows of batch 2",
        restart_at_once=survives,
    )
    if survives:
        assert error is None, error
    else:
        assert kafka.bootstrap in delivery_error(error)
        # The user starts the query again once the broker is back: it re-runs batch 2.
        assert finish(start_write(spark, kafka, source, checkpoint, topic, **options)) is None
    copies = check_topic(kafka, topic, ids)
    if not survives:
        # The rows of batch 2 acknowledged before the kill (about 5,000 at least), sent
        # again by the re-run, identical.
        assert copies >= 4_000


# -- reading ------------------------------------------------------------------------------


def start_read(
    spark: Any, kafka: KafkaBroker, topic: str, output: Path, checkpoint: Path, **options: str
) -> Any:
    """A streaming read of `topic` into parquet files under `output` (Spark's file sink
    writes each micro-batch once, recorded in its own log); micro-batches end at the
    writer's watermarks, about one written micro-batch each."""
    reader = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(SMALL))
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    return (
        reader.load()
        .select("id", "name", "_op", "_commit_ts")
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )


def reading_batch(checkpoint: Path, batch: int) -> bool:
    """Whether the query planned micro-batch `batch` and has not finished it."""
    started = (checkpoint / "offsets" / str(batch)).exists()
    return started and not (checkpoint / "commits" / str(batch)).exists()


@pytest.mark.parametrize(
    ("poll_timeout_ms", "survives"),
    [("300000", True), ("5000", False)],
    ids=["rides-out", "resumes"],
)
def test_a_streaming_read_across_a_broker_kill_outputs_every_row_exactly_once(
    spark: Any, kafka_restarts: KafkaBroker, tmp_path: Path, poll_timeout_ms: str, survives: bool
) -> None:
    kafka = kafka_restarts
    topic = f"restart_read_{'rides' if survives else 'resumes'}"
    ids = source_files(tmp_path / "in")
    assert finish(start_write(spark, kafka, tmp_path / "in", tmp_path / "write-chk", topic)) is None
    output, checkpoint = tmp_path / "out", tmp_path / "read-chk"
    options = {"kafkaConsumer.pollTimeoutMs": poll_timeout_ms}
    query = start_read(spark, kafka, topic, output, checkpoint, **options)
    # The BIG micro-batch is the reader's third too (each ends at a watermark).
    error = kill_during(
        kafka,
        query,
        lambda: reading_batch(checkpoint, 2),
        "the reader in batch 2",
        restart_at_once=survives,
    )
    if survives:
        assert error is None, error
    else:
        assert kafka.bootstrap in delivery_error(error)
        query = start_read(spark, kafka, topic, output, checkpoint, **options)
        assert finish(query) is None
    found = [r["id"] for r in spark.read.parquet(str(output)).select("id").collect()]
    assert_same_ids(found, ids, f"the read of {topic}", once=True)
