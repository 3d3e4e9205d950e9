"""End to end through Spark and Kafka: one cached DataFrame of the reference table written
by `format("ticdc")` in every protocol, by a ceiling writer that does everything but the
encoding, and by the `foreachPartition` + `json.dumps` loop users hand-roll today.

    python benchmarks/bench_e2e.py --rows 2000000 --output e2e.json

Writers (`--writers`, comma-separated, default all):

| name | what it is |
| --- | --- |
| `simple-json` | `protocol=simple` (`encoding-format=json`) |
| `simple-avro` | `protocol=simple`, `encoding-format=avro` |
| `avro` | `protocol=avro` with the test schema registry (tests/support/registry.py) |
| `debezium` | `protocol=debezium`, with the `schema` part |
| `debezium-no-schema` | `protocol=debezium`, `debezium-disable-schema=true` |
| `canal-json` | `protocol=canal-json` |
| `ceiling` | a Python data source defined here: the same Arrow writer path and the same |
|  | producer (`ticdc_sink.producer.KafkaProducer`, the same KafkaConfig), sending one |
|  | pre-built payload per input row with the sink's producer call (`send_many` per |
|  | record batch); no encoding at all. The payloads are real Simple JSON row messages |
|  | of a sample of the frame, encoded before the run and cycled through, so they have |
|  | the average size, and compress as much, as the sink's own messages |
|  | (`--ceiling-from debezium`: the messages of another protocol instead) |
| `baseline` | `df.foreachPartition`: `json.dumps(row.asDict(recursive=True), default=str)` |
|  | and one `confluent_kafka.Producer.produce` per row (key: the id), the same |
|  | producer settings, delivery reports checked, `flush` at the end |

How it measures. The frame (--rows rows in --partitions Spark partitions: bigint key, int,
varchar(64), text, double, decimal(10,2), datetime, date, tinyint(1), nullable varchar;
70% inserts, 20% updates with `_before`, 10% deletes; `_op` and `_commit_ts` columns;
types through `column-types`, `primary-key=id`) is cached and counted before anything is
timed. Each writer gets a fresh local Tansu broker (Tansu keeps every message in memory, so
it is restarted between writers rather than holding millions of them), first writes a
small warm-up slice of the frame (Python workers, imports, topic creation, registry
subjects), then the whole frame --repeat times; the time is the `save()` (or
`foreachPartition`) call, from call to return, so it includes the driver's commit step
(watermarks) and waiting for every acknowledgement. Bytes are what the topic holds: after
the timed runs the topic is read back once from the beginning and key + value bytes are
summed (the warm-up's bytes, counted the same way before, are subtracted), so they include
bootstraps, watermarks and DDL messages: everything the writer produced. MB is 10^6 bytes.
Ratios compare median rows/s.

Prints one line per writer as it finishes, a summary table, and one JSON line with
everything; --output also writes that JSON to a file. A writer that fails prints its
error and the run goes on with the next.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import _common as common  # first: puts the repo on sys.path and PYTHONPATH
import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

from ticdc_sink._local_broker import LocalBroker

TICDC_WRITERS = list(common.PROTOCOLS)
ALL_WRITERS = [*TICDC_WRITERS, "ceiling", "baseline"]
CEILING_TOPIC = "bench_ceiling"
BASELINE_TOPIC = "bench_baseline"
WARMUP_ROWS = 2_000
PAYLOAD_SAMPLE_ROWS = 20_000


# -- the ceiling: the sink's path without the sink's work -----------------------------------


class CeilingCommitMessage(WriterCommitMessage):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class CeilingDataSource(DataSource):
    """`format("bench_ceiling")`: options `ceiling-topic` (where to send), `payload-file`
    (the pre-built payloads, one base64 line each), and the ticdc writers' own options,
    from which the same SinkConfig, and so the same KafkaConfig, is built."""

    @classmethod
    def name(cls) -> str:
        return "bench_ceiling"

    def writer(self, schema: Any, overwrite: bool) -> CeilingWriter:
        from ticdc_sink.config import SinkConfig

        options = dict(self.options)
        topic = options.pop("ceiling-topic")
        path = options.pop("payload-file")
        return CeilingWriter(SinkConfig.from_options(options).kafka, topic, path)


class CeilingWriter(DataSourceArrowWriter):
    def __init__(self, kafka: Any, topic: str, path: str) -> None:
        self.kafka = kafka
        self.topic = topic
        self.path = path

    def write(self, iterator: Iterator[pa.RecordBatch]) -> CeilingCommitMessage:
        from ticdc_sink.producer import KafkaProducer

        # Simple JSON rows carry an empty key; the default dispatcher (table) sends all of
        # a table's rows to one partition, so this does too.
        key = b""
        payloads = read_payloads(self.path)
        cycle = payloads * 2  # a slice starting anywhere in the first copy
        at = 0
        rows = 0
        with KafkaProducer(self.kafka) as producer:
            producer.partition_count(self.topic)  # creates the topic as the sink does
            # The producer call the sink's writer makes: one send_many per record batch.
            send_many = producer.send_many
            topic = self.topic
            for batch in iterator:
                n = batch.num_rows
                values = cycle[at : at + n] if n <= len(payloads) else (payloads * n)[:n]
                send_many(topic, 0, key, values)
                at = (at + n) % len(payloads)
                rows += n
            producer.flush()
        return CeilingCommitMessage(rows)


# -- the baseline: what users write by hand today ---------------------------------------------


def make_baseline(producer_config: dict[str, str], topic: str) -> Callable[[Iterator[Any]], None]:
    def write_partition(rows: Iterator[Any]) -> None:
        import json

        import confluent_kafka

        producer = confluent_kafka.Producer(dict(producer_config))
        failures: list[Any] = []

        def on_delivery(error: Any, message: Any) -> None:
            if error is not None:
                failures.append(error)

        sent = 0
        for row in rows:
            record = row.asDict(recursive=True)
            value = json.dumps(record, default=str).encode()
            key = str(record["id"]).encode()
            while True:
                try:
                    producer.produce(topic, value=value, key=key, on_delivery=on_delivery)
                    break
                except BufferError:  # queue full: serve delivery reports, then retry
                    producer.poll(0.1)
            sent += 1
            if sent % 1000 == 0:
                producer.poll(0)
        left = producer.flush(300)
        if left or failures:
            raise RuntimeError(
                f"baseline: {left} undelivered, {len(failures)} failed of {sent}: {failures[:1]}"
            )

    return write_partition


def baseline_producer_config(bootstrap: str) -> dict[str, str]:
    """The producer settings the sink uses (its defaults under the KafkaConfig's)."""
    from ticdc_sink.config import SinkConfig
    from ticdc_sink.producer import _PRODUCER_DEFAULTS

    kafka = SinkConfig.from_options(common.sink_options(bootstrap, "simple-json")).kafka
    return {**_PRODUCER_DEFAULTS, **kafka.producer_config()}


def create_topic(bootstrap: str, topic: str, partitions: int = 3) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    futures[topic].result(timeout=30)


# -- running one writer -----------------------------------------------------------------------


class Writer:
    """How to write a frame with one of the writers, against one broker."""

    def __init__(self, name: str, bootstrap: str, registry_url: str | None, payload: str | None):
        self.name = name
        self.bootstrap = bootstrap
        if name in common.PROTOCOLS:
            self.topic = common.TOPIC_EXPRESSION.format(schema=common.DATABASE, table=common.TABLE)
            self.options = common.sink_options(bootstrap, name, registry_url)
        elif name == "ceiling":
            self.topic = CEILING_TOPIC
            self.options = {
                **common.sink_options(bootstrap, "simple-json"),
                "ceiling-topic": CEILING_TOPIC,
                "payload-file": str(payload),
            }
        else:
            self.topic = BASELINE_TOPIC
            self.options = {}

    def prepare(self) -> None:
        if self.name == "baseline":  # the producer does not auto-create (same settings)
            create_topic(self.bootstrap, self.topic)

    def write(self, frame: Any) -> None:
        if self.name == "baseline":
            frame.foreachPartition(
                make_baseline(baseline_producer_config(self.bootstrap), self.topic)
            )
            return
        source = "ticdc" if self.name in common.PROTOCOLS else "bench_ceiling"
        frame.write.format(source).mode("append").options(**self.options).save()


def run_writer(
    name: str,
    frame: Any,
    warmup: Any,
    args: argparse.Namespace,
    registry_url: str | None,
    payload: str | None,
) -> dict[str, Any]:
    with LocalBroker() as broker:
        writer = Writer(name, broker.bootstrap, registry_url, payload)
        writer.prepare()
        writer.write(warmup)
        warm_messages, warm_bytes = common.count_topic(broker.bootstrap, writer.topic)
        seconds = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            writer.write(frame)
            seconds.append(time.perf_counter() - start)
        messages, size = common.count_topic(broker.bootstrap, writer.topic)
    messages = (messages - warm_messages) / args.repeat
    size = (size - warm_bytes) / args.repeat
    median = statistics.median(seconds)
    return {
        "writer": name,
        "rows": args.rows,
        "seconds": [round(s, 3) for s in seconds],
        "seconds_median": round(median, 3),
        "rows_per_s": round(args.rows / median),
        "rows_per_s_best": round(args.rows / min(seconds)),
        "messages": round(messages),
        "bytes": round(size),
        "mb_per_s": round(size / median / 1e6, 2),
        "bytes_per_message": round(size / messages, 1) if messages else None,
    }


def write_payloads(payloads: list[bytes], path: str) -> None:
    with open(path, "w") as f:
        for payload in payloads:
            f.write(base64.b64encode(payload).decode() + "\n")


def read_payloads(path: str) -> list[bytes]:
    with open(path) as f:
        return [base64.b64decode(line) for line in f]


def sample_payloads(spark_frame: Any, protocol: str) -> list[bytes]:
    """The row messages (key + value) `protocol` writes for a sample of the frame, written
    through format("ticdc") and read back: Simple JSON's without its bootstraps and
    watermark, another protocol's all but tombstones (its few non-row messages weigh
    nothing in the average)."""
    from ticdc_sink.read.consumer import TopicLog
    from ticdc_sink.read.options import ReadConfig

    if protocol in common.NEEDS_REGISTRY:
        raise ValueError(f"--ceiling-from {protocol}: needs a registry; use a JSON protocol")
    with LocalBroker() as broker:
        writer = Writer(protocol, broker.bootstrap, None, None)
        writer.write(spark_frame)
        with TopicLog(ReadConfig(broker.bootstrap, writer.topic, poll_timeout_s=30.0)) as log:
            records = log.read_until_idle(None, idle_s=2.0, timeout_s=30.0)
    rows = ("INSERT", "UPDATE", "DELETE")
    payloads = [
        (r.key or b"") + r.value
        for r in records
        if r.value and (protocol != "simple-json" or json.loads(r.value).get("type") in rows)
    ]
    if not payloads:
        raise RuntimeError(f"the {protocol} sample wrote no row messages")
    return payloads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument(
        "--writers",
        default=",".join(ALL_WRITERS),
        help=f"comma-separated, from {', '.join(ALL_WRITERS)} (default all)",
    )
    parser.add_argument("--partitions", type=int, default=2, help="Spark partitions")
    parser.add_argument("--repeat", type=int, default=1, help="timed writes per writer")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument(
        "--ceiling-from",
        default="simple-json",
        choices=[p for p in common.PROTOCOLS if p not in common.NEEDS_REGISTRY],
        help="whose messages the ceiling sends (default simple-json)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for every writer (repeatable), e.g. kafka.linger.ms=20",
    )
    parser.add_argument("--spark-memory", default="4g", help="spark.driver.memory")
    parser.add_argument("--verbose", action="store_true", help="full tracebacks of failures")
    args = parser.parse_args()
    for option in args.option:
        key, sep, value = option.partition("=")
        if not sep:
            parser.error(f"--option {option!r}: use KEY=VALUE")
        common.EXTRA_OPTIONS[key.strip()] = value.strip()
    writers = [w.strip() for w in args.writers.split(",") if w.strip()]
    unknown = sorted(set(writers) - set(ALL_WRITERS))
    if unknown:
        parser.error(f"unknown writers {', '.join(unknown)}; use {', '.join(ALL_WRITERS)}")

    registry = None
    if any(w in common.NEEDS_REGISTRY for w in writers):
        try:
            from tests.support.registry import TestSchemaRegistry
        except ImportError as exc:
            print(
                f"skipping {', '.join(w for w in writers if w in common.NEEDS_REGISTRY)}: "
                f"the test schema registry (tests/support/registry.py) cannot be imported: "
                f"{exc}",
                flush=True,
            )
            writers = [w for w in writers if w not in common.NEEDS_REGISTRY]
        else:
            registry = TestSchemaRegistry().start()

    handle, payload_path = tempfile.mkstemp(suffix=".payloads")
    os.close(handle)
    spark = common.make_spark(args.spark_memory)
    spark.dataSource.register(CeilingDataSource)
    try:
        started = time.perf_counter()
        frame = common.reference_frame(spark, args.rows, args.partitions).cache()
        cached = frame.count()
        print(
            f"frame: {cached} rows in {frame.rdd.getNumPartitions()} partitions, cached in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        step = max(args.rows // WARMUP_ROWS, 1)
        warmup = frame.where(F.col("id") % step == 0)

        payload, average = None, None
        if "ceiling" in writers:
            step = max(args.rows // PAYLOAD_SAMPLE_ROWS, 1)
            try:
                sample = frame.where(F.col("id") % step == 0)
                payloads = sample_payloads(sample, args.ceiling_from)
            except Exception as exc:  # noqa: BLE001 (reported; the others still run)
                print(f"skipping ceiling: cannot sample payloads: {common.short_error(exc)}")
                writers.remove("ceiling")
            else:
                payload = payload_path
                write_payloads(payloads, payload)
                average = sum(map(len, payloads)) / len(payloads)
                print(
                    f"ceiling payloads: {len(payloads)} {args.ceiling_from} row messages, "
                    f"{average:.0f} bytes on average",
                    flush=True,
                )

        results: list[dict[str, Any]] = []
        for name in writers:
            try:
                result = run_writer(
                    name, frame, warmup, args, registry.url if registry else None, payload
                )
            except Exception as exc:  # noqa: BLE001 (a failing writer must not stop the rest)
                error = common.short_error(exc)
                print(f"{name:<20} FAILED: {error}", flush=True)
                if args.verbose:
                    traceback.print_exc()
                results.append({"writer": name, "error": error})
                continue
            results.append(result)
            print(
                f"{name:<20} {result['rows_per_s']:>10,} rows/s {result['mb_per_s']:>8.2f} MB/s "
                f"{result['seconds_median']:>8.2f} s  {result['messages']:,} messages, "
                f"{result['bytes_per_message']} B/message",
                flush=True,
            )
    finally:
        spark.stop()
        if registry is not None:
            registry.stop()
        os.unlink(payload_path)

    by_name = {r["writer"]: r for r in results if "error" not in r}
    for result in results:
        for ref in ("ceiling", "baseline"):
            if "error" not in result and ref in by_name:
                result[f"vs_{ref}"] = round(result["rows_per_s"] / by_name[ref]["rows_per_s"], 3)

    print()
    header = ("writer", "rows/s", "MB/s", "s", "vs ceiling", "vs baseline")
    print("{:<20} {:>10} {:>8} {:>8} {:>11} {:>12}".format(*header))
    for r in results:
        if "error" in r:
            print(f"{r['writer']:<20} failed: {r['error'][:80]}")
            continue
        ratios = [f"{r[k]:.2f}x" if k in r else "-" for k in ("vs_ceiling", "vs_baseline")]
        print(
            f"{r['writer']:<20} {r['rows_per_s']:>10,} {r['mb_per_s']:>8.2f} "
            f"{r['seconds_median']:>8.2f} {ratios[0]:>11} {ratios[1]:>12}"
        )
    report = {
        "bench": "e2e",
        "rows": args.rows,
        "partitions": args.partitions,
        "repeat": args.repeat,
        "ceiling_payload_bytes": round(average) if average else None,
        "ceiling_from": args.ceiling_from,
        "options": common.EXTRA_OPTIONS,
        "environment": common.environment(),
        "results": results,
    }
    print(json.dumps(report))
    if args.output:
        with open(args.output, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
