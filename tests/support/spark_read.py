"""Writing a DataFrame with the sink (or records as they are) and reading a topic back with
`spark.read` or `spark.readStream`, for the reader's integration tests; `stream_rows` runs
a stream once with `Trigger.AvailableNow`."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from confluent_kafka import Producer

__all__ = ["produce", "progress_offset", "read_topic", "stream_rows", "write_frame"]


def write_frame(df: Any, broker: Any, topic: str, **options: str) -> None:
    """Append `df` to `topic` with `format("ticdc")` and `options`."""
    writer = df.write.format("ticdc").mode("append")
    writer = writer.option("kafka.bootstrap.servers", broker.bootstrap).option("topic", topic)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def read_topic(spark: Any, broker: Any, topic: str, **options: str) -> Any:
    """`topic` read with `format("ticdc")` and `options` (by default up to its end now)."""
    reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", broker.bootstrap)
    reader = reader.option("topic", topic)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def produce(
    broker: Any,
    topic: str,
    records: list[tuple[bytes | None, bytes | None]],
    *,
    create: bool = True,
    partition: int = 0,
) -> None:
    """Send `records` (key, value) to `partition` of `topic` (first created with one
    partition, unless `create` is false), in order, and wait for every acknowledgement."""
    if create:
        broker.create_topic(topic, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": "true"})
    failures: list[Any] = []
    for key, value in records:
        producer.produce(
            topic,
            value,
            key,
            partition=partition,
            on_delivery=lambda e, _m: e and failures.append(e),
        )
    assert producer.flush(30) == 0 and not failures, failures


def progress_offset(end: Any) -> dict[str, Any]:
    """A streaming progress report's end offset as a dict: JSON text, a dict, or (PySpark
    4.0's `SourceProgress.fromJson` applies `str()` to the parsed JSON) the dict's repr."""
    if not isinstance(end, str):
        return end
    return json.loads(end) if end.startswith('{"') else ast.literal_eval(end)


def stream_rows(
    spark: Any, bootstrap: str, topic: str, checkpoint: str, **options: str
) -> list[tuple[Any, ...]]:
    """One `Trigger.AvailableNow` run of a stream of `topic` from its earliest offsets
    (unless `options` say otherwise) with `checkpoint`; every row read, as (id,
    _commit_ts, _op) tuples in the order read."""
    rows: list[tuple[Any, ...]] = []

    def collect(df: Any, _batch_id: int) -> None:
        rows.extend((r["id"], r["_commit_ts"], r["_op"]) for r in df.collect())

    run_stream(spark, bootstrap, topic, checkpoint, collect, **options)
    return rows


def run_stream(
    spark: Any,
    bootstrap: str,
    topic: str,
    checkpoint: str,
    each_batch: Callable[[Any, int], None],
    **options: str,
) -> None:
    """One `Trigger.AvailableNow` run of a stream of `topic` from its earliest offsets
    (unless `options` say otherwise) with `checkpoint`, `each_batch` given every
    micro-batch (`foreachBatch`)."""
    reader = spark.readStream.format("ticdc").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("topic", topic).option("startingOffsets", "earliest")
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()
