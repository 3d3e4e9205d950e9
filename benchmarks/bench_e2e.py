"""End to end through Spark and Kafka: one cached DataFrame of the reference table written
by `format("ticdc")` in every protocol, by a ceiling writer that does everything but the
encoding, and by the `foreachPartition` + `json.dumps` loop users hand-roll today, on Tansu
and on Apache Kafka side by side (`--broker tansu|kafka|both`, default both).

    python benchmarks/bench_e2e.py --rows 2000000 --output e2e.json
    python benchmarks/bench_e2e.py --rows 400000 --rounds 5 --writers ceiling --tables 20

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

Cases (`--dispatcher`, `--tables N`, `--columns N`, `--fanout TxP`; README) are Simple JSON
writers with other options or frames, run next to the plain `simple-json` writer and the
`ceiling` in the same run.

How it measures. The frame (--rows rows in --partitions Spark partitions: bigint key, int,
varchar(64), text, double, decimal(10,2), datetime, date, tinyint(1), nullable varchar;
70% inserts, 20% updates with `_before`, 10% deletes; `_op` and `_commit_ts` columns;
types through `column-types`, `primary-key=id`) is cached and counted before anything is
timed. Each writer runs on each broker of `--broker`, one after the other: `tansu` (the
demo's embedded broker) and `kafka` (Apache Kafka in KRaft mode, tests/support/kafka.py),
and gets a fresh broker each time (Tansu keeps every message in memory, Kafka in a log
directory deleted when it stops, so neither holds millions of earlier messages), first
writes a small warm-up slice of the frame (Python workers, imports, topic creation, registry
subjects), then the whole frame --repeat times; the time is the `save()` (or
`foreachPartition`) call, from call to return, so it includes the driver's commit step
(watermarks) and waiting for every acknowledgement. Bytes are what the topic holds: after
the timed runs the topic is read back once from the beginning and key + value bytes are
summed (the warm-up's bytes, counted the same way before, are subtracted), so they include
bootstraps, watermarks and DDL messages: everything the writer produced. MB is 10^6 bytes.
Ratios compare median rows/s, each within one broker (a writer on Kafka against the
ceiling and baseline on Kafka). On a loaded machine, `--rounds N` runs the whole list of
writers N times, interleaved (plain, ceiling, case, plain, ceiling, case, ...): medians are
over every round's timed writes, and each case's ratio is also given round by round (its
run against the plain run minutes apart), whose spread shows what the load did.

Prints one line per writer and broker as it finishes, a summary table (each writer's
brokers next to each other), and one JSON line with everything, every result tagged with
its `broker`; --output also writes that JSON to a file. A writer that fails prints its
error and the run goes on with the next.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
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
    from ticdc_sink.kafka_settings import PRODUCER_DEFAULTS

    kafka = SinkConfig.from_options(common.sink_options(bootstrap, "simple-json")).kafka
    return {**PRODUCER_DEFAULTS, **kafka.producer_config()}


def create_topic(bootstrap: str, topic: str, partitions: int = 3) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    futures[topic].result(timeout=30)


# -- running one writer -----------------------------------------------------------------------


class Writer:
    """How to write a frame with one of the writers, against one broker. A case writer
    (`simple-json/partition=index-value`, `ceiling/columns=100`, ...) is its base writer
    with `overrides` on top of its options (None removes an option) and, for the ceiling,
    its own `payload` file."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        registry_url: str | None,
        payload: str | None,
        overrides: dict[str, str | None] | None = None,
    ):
        self.name = name
        self.base = name.split("/")[0]
        self.bootstrap = bootstrap
        if self.base in common.PROTOCOLS:
            self.topic = common.TOPIC_EXPRESSION.format(schema=common.DATABASE, table=common.TABLE)
            self.options = common.sink_options(bootstrap, self.base, registry_url)
        elif self.base == "ceiling":
            self.topic = CEILING_TOPIC
            self.options = {
                **common.sink_options(bootstrap, "simple-json"),
                "ceiling-topic": CEILING_TOPIC,
                "payload-file": str(payload),
            }
        else:
            self.topic = BASELINE_TOPIC
            self.options = {}
        for key, value in (overrides or {}).items():
            if value is None:
                self.options.pop(key, None)
            else:
                self.options[key] = value
        topic = (overrides or {}).get("topic")
        if topic and "{" not in topic:  # a fixed topic for every table
            self.topic = topic

    def prepare(self) -> None:
        if self.base == "baseline":  # the producer does not auto-create (same settings)
            create_topic(self.bootstrap, self.topic)

    def write(self, frame: Any) -> None:
        if self.base == "baseline":
            frame.foreachPartition(
                make_baseline(baseline_producer_config(self.bootstrap), self.topic)
            )
            return
        source = "ticdc" if self.base in common.PROTOCOLS else "bench_ceiling"
        frame.write.format(source).mode("append").options(**self.options).save()


@dataclasses.dataclass
class Case:
    """A writer of the run: its name, the frame it writes (and warms up with), option
    overrides, the ceiling payloads it sends, and whether the bytes of its topic can be
    counted (a fan-out writes to many topics) or its commit step timed alone."""

    name: str
    frame: Any
    warmup: Any
    overrides: dict[str, str | None] = dataclasses.field(default_factory=dict)
    payload: str | None = None
    count: bool = True
    fanout: tuple[int, int] | None = None
    rows: int | None = None  # None: --rows


def run_writer(
    case: Case, args: argparse.Namespace, registry_url: str | None, broker_name: str
) -> dict[str, Any]:
    with common.start_broker(broker_name) as broker:
        writer = Writer(case.name, broker.bootstrap, registry_url, case.payload, case.overrides)
        writer.prepare()
        writer.write(case.warmup)
        warm_messages, warm_bytes = (
            common.count_topic(broker.bootstrap, writer.topic) if case.count else (0, 0)
        )
        seconds = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            writer.write(case.frame)
            seconds.append(time.perf_counter() - start)
        messages, size = (
            common.count_topic(broker.bootstrap, writer.topic) if case.count else (0, 0)
        )
        commit = time_fanout_commit(writer, case.fanout) if case.fanout else None
    rows = case.rows or args.rows
    messages = (messages - warm_messages) / args.repeat
    size = (size - warm_bytes) / args.repeat
    median = statistics.median(seconds)
    result = {
        "writer": case.name,
        "broker": broker_name,
        "rows": rows,
        "seconds": [round(s, 3) for s in seconds],
        "seconds_median": round(median, 3),
        "rows_per_s": round(rows / median),
        "rows_per_s_best": round(rows / min(seconds)),
        "messages": round(messages),
        "bytes": round(size),
        "mb_per_s": round(size / median / 1e6, 2),
        "bytes_per_message": round(size / messages, 1) if messages else None,
    }
    if commit is not None:
        result["commit"] = commit
    return result


def merge_rounds(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One writer's results over the rounds: medians over every timed write, the rows/s of
    each round (`rounds_rows_per_s`, None where it failed), and the commit step's median
    where it was timed."""
    done = [r for r in runs if "error" not in r]
    if not done:
        return runs[0]
    if len(done) == 1:
        return {**done[0], "rounds_rows_per_s": [r.get("rows_per_s") for r in runs]}
    rows = done[0]["rows"]
    seconds = [s for r in done for s in r["seconds"]]
    median = statistics.median(seconds)
    messages = statistics.median(r["messages"] for r in done)
    size = statistics.median(r["bytes"] for r in done)
    merged = {
        **done[0],
        "seconds": seconds,
        "seconds_median": round(median, 3),
        "rows_per_s": round(rows / median),
        "rows_per_s_best": round(rows / min(seconds)),
        "messages": round(messages),
        "bytes": round(size),
        "mb_per_s": round(size / median / 1e6, 2),
        "bytes_per_message": round(size / messages, 1) if messages else None,
        "rounds_rows_per_s": [r.get("rows_per_s") for r in runs],
        "failed_rounds": len(runs) - len(done),
    }
    commits = [r["commit"]["seconds"] for r in done if "commit" in r]
    if commits:
        merged["commit"] = {
            **done[0]["commit"],
            "seconds": round(statistics.median(commits), 3),
            "seconds_rounds": commits,
        }
    return merged


def round_ratios(result: dict[str, Any], reference: dict[str, Any]) -> list[float]:
    """rows/s of `result` over `reference`'s, round by round (the runs next to each other;
    a round either failed is left out)."""
    pairs = zip(result["rounds_rows_per_s"], reference["rounds_rows_per_s"], strict=False)
    return [round(a / b, 3) for a, b in pairs if a and b]


def add_ratios(results: list[dict[str, Any]]) -> None:
    """Each result's ratios to the ceiling, the baseline and the plain case (and a case's
    own ceiling, a fan-out's extra seconds), in place; `results` are one broker's."""
    by_name = {r["writer"]: r for r in results if "error" not in r}
    for result in results:
        if "error" in result:
            continue
        for ref, key in (("ceiling", "vs_ceiling"), ("baseline", "vs_baseline")):
            if ref in by_name:
                result[key] = round(result["rows_per_s"] / by_name[ref]["rows_per_s"], 3)
        plain_name = "simple-json"
        if "/fanout=" in result["writer"]:
            # A fan-out against the same rows in one table: the difference is the fan-out.
            plain_name = f"simple-json/fanout-plain={result['rows']}-rows"
            if plain_name in by_name:
                extra = result["seconds_median"] - by_name[plain_name]["seconds_median"]
                result["fanout_extra_s"] = round(extra, 3)
        if plain_name in by_name and result["writer"].startswith("simple-json/"):
            plain = by_name[plain_name]["rows_per_s"]
            result["vs_plain"] = round(result["rows_per_s"] / plain, 3)
            result["vs_plain_rounds"] = round_ratios(result, by_name[plain_name])
        if "ceiling" in by_name and result is not by_name["ceiling"]:
            result["vs_ceiling_rounds"] = round_ratios(result, by_name["ceiling"])
        own = by_name.get(result["writer"].replace("simple-json/", "ceiling/"))
        if own is not None and own is not result and own["mb_per_s"]:
            # A wide table against a ceiling sending its own messages: bytes/s.
            result["vs_own_ceiling_bytes"] = round(result["mb_per_s"] / own["mb_per_s"], 3)


def print_summary(results: list[dict[str, Any]]) -> None:
    """The summary table: a line per writer and broker, a writer's brokers together."""
    print()
    header = (
        "writer",
        "broker",
        "rows/s",
        "MB/s",
        "s",
        "vs ceiling",
        "vs baseline",
        "vs plain",
        "other",
    )
    print("{:<32} {:<6} {:>10} {:>8} {:>8} {:>11} {:>12} {:>9}  {}".format(*header))
    for r in results:
        if "error" in r:
            print(f"{r['writer']:<32} {r['broker']:<6} failed: {r['error'][:80]}")
            continue
        keys = ("vs_ceiling", "vs_baseline", "vs_plain")
        ratios = [f"{r[k]:.2f}x" if k in r else "-" for k in keys]
        other = []
        if "vs_own_ceiling_bytes" in r:
            other.append(f"bytes/s vs its ceiling {r['vs_own_ceiling_bytes']:.2f}x")
        if "fanout_extra_s" in r:
            other.append(f"{r['fanout_extra_s']:+.2f} s against the same rows in one table")
        if "commit" in r:
            other.append(f"commit alone {r['commit']['seconds']:.3f} s")
        for key, what in (("vs_plain_rounds", "plain"), ("vs_ceiling_rounds", "ceiling")):
            if len(r.get(key, ())) > 1:
                ratios_of_rounds = r[key]
                other.append(
                    f"vs {what} by round {min(ratios_of_rounds):.2f}-{max(ratios_of_rounds):.2f}x "
                    f"(median {statistics.median(ratios_of_rounds):.2f}x)"
                )
        print(
            f"{r['writer']:<32} {r['broker']:<6} {r['rows_per_s']:>10,} {r['mb_per_s']:>8.2f} "
            f"{r['seconds_median']:>8.2f} {ratios[0]:>11} {ratios[1]:>12} {ratios[2]:>9}  "
            + "; ".join(other)
        )


def time_fanout_commit(writer: Writer, fanout: tuple[int, int]) -> dict[str, Any]:
    """The driver's commit step alone for a fan-out case, after its write: one watermark to
    every partition of its tables' topics (which exist by then) through the sink's own
    `send_watermark`, timed; a fresh producer, so the metadata lookup is included."""
    from ticdc_sink.config import SinkConfig
    from ticdc_sink.writer import rules, send_watermark

    tables, _ = fanout
    config = SinkConfig.from_options(writer.options)
    topics = [rules.topic_for(config.routing, common.DATABASE, f"t{i}") for i in range(tables)]
    start = time.perf_counter()
    send_watermark(config, common.BASE_TSO + 10**9, topics, build_ts_ms=0)
    seconds = time.perf_counter() - start
    return {"topics": len(topics), "seconds": round(seconds, 3)}


def write_payloads(payloads: list[bytes], path: str) -> None:
    with open(path, "w") as f:
        for payload in payloads:
            f.write(base64.b64encode(payload).decode() + "\n")


def read_payloads(path: str) -> list[bytes]:
    with open(path) as f:
        return [base64.b64decode(line) for line in f]


def sample_payloads(
    spark_frame: Any,
    protocol: str,
    broker_name: str,
    overrides: dict[str, str | None] | None = None,
) -> list[bytes]:
    """The row messages (key + value) `protocol` writes for a sample of the frame, written
    through format("ticdc") to a fresh `broker_name` broker and read back: Simple JSON's
    without its bootstraps and watermark, another protocol's all but tombstones (its few
    non-row messages weigh nothing in the average). The same bytes whichever broker."""
    from ticdc_sink.read.consumer import TopicLog
    from ticdc_sink.read.options import ReadConfig

    if protocol in common.NEEDS_REGISTRY:
        raise ValueError(f"--ceiling-from {protocol}: needs a registry; use a JSON protocol")
    with common.start_broker(broker_name) as broker:
        writer = Writer(protocol, broker.bootstrap, None, None, overrides)
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


def extra_cases(
    args: argparse.Namespace,
    spark: Any,
    frame: Any,
    warmup: Any,
    dispatchers: list[str],
    fanout: tuple[int, int] | None,
    payload_path: str,
    broker_name: str,
) -> list[Case]:
    """The cases of --dispatcher, --tables, --columns and --fanout (Simple JSON each)."""
    from pyspark.sql import functions as F

    cases = []
    for dispatcher in dispatchers:
        overrides: dict[str, str | None] = {"partition": dispatcher}
        if dispatcher == "columns":
            overrides["partition-columns"] = "id"
        cases.append(Case(f"simple-json/partition={dispatcher}", frame, warmup, overrides))
    if args.tables:
        # One fixed topic, as the plain case has one: the same bytes, only the tables differ.
        # Cached like the plain frame, so the case does not also pay Spark's computing the
        # `_table` column each time (a user's frame holds it already).
        overrides = {"table": None, "topic": "bench_tables"}
        tables = common.with_tables(frame, args.tables).cache()
        tables.count()
        cases.append(
            Case(
                f"simple-json/tables={args.tables}",
                tables,
                common.with_tables(warmup, args.tables),
                overrides,
            )
        )
    if args.columns:
        wide, types = common.wide_frame(spark, args.rows, args.partitions, args.columns)
        wide = wide.cache()
        wide.count()
        step = max(args.rows // WARMUP_ROWS, 1)
        wide_warmup = wide.where(F.col("id") % step == 0)
        overrides = {"column-types": json.dumps(types)}
        step = max(args.rows // PAYLOAD_SAMPLE_ROWS, 1)
        sample = wide.where(F.col("id") % step == 0)
        payloads = sample_payloads(sample, "simple-json", broker_name, overrides)
        path = payload_path + f".columns{args.columns}"
        write_payloads(payloads, path)
        name = f"columns={args.columns}"
        cases.append(Case(f"simple-json/{name}", wide, wide_warmup, overrides))
        cases.append(Case(f"ceiling/{name}", wide, wide_warmup, overrides, payload=path))
    if fanout is not None:
        tables, partitions = fanout
        rows = frame.where(F.col("id") < tables * 10)
        overrides = {"table": None, "topic": "bench_fan_{table}", "partition-num": str(partitions)}
        spread = common.with_tables(rows, tables)
        cases.append(
            Case(
                f"simple-json/fanout={tables}x{partitions}",
                spread,
                spread,  # the warm-up creates every topic; the timed write finds them
                overrides,
                count=False,
                fanout=fanout,
                rows=tables * 10,
            )
        )
        cases.append(
            Case(
                f"simple-json/fanout-plain={tables * 10}-rows",
                rows,
                rows,
                {"partition-num": str(partitions)},
                count=False,
                rows=tables * 10,
            )
        )
    return cases


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
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the whole list of writers this many times, interleaved (plain, case, "
        "plain, case, ...), for medians and spreads on a loaded machine",
    )
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
    parser.add_argument(
        "--dispatcher",
        default="",
        help="comma list of partition dispatchers (index-value, columns, ts) to run as "
        "simple-json cases next to the plain one",
    )
    parser.add_argument(
        "--tables", type=int, default=0, help="also the same rows over N tables by _table"
    )
    parser.add_argument(
        "--columns",
        type=int,
        default=0,
        help="also a table of N columns, and a ceiling sending its messages (bytes/s)",
    )
    parser.add_argument(
        "--fanout",
        default="",
        metavar="TxP",
        help="also a micro-batch of 10 rows per table over T tables of P partitions each "
        "(and the same rows in one table); the commit step is timed alone too",
    )
    common.add_broker_option(parser)
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
    dispatchers = [d.strip() for d in args.dispatcher.split(",") if d.strip()]
    fanout = None
    if args.fanout:
        tables, sep, parts = args.fanout.lower().partition("x")
        if not sep or not tables.isdigit() or not parts.isdigit():
            parser.error(f"--fanout {args.fanout!r}: use TxP, e.g. 200x16")
        fanout = (int(tables), int(parts))
    if dispatchers or args.tables or args.columns or fanout:
        # Every case is reported against the plain case and the ceiling of the same run.
        writers = list(dict.fromkeys(["simple-json", "ceiling", *writers]))
    brokers = common.available_brokers(args.broker)
    if not brokers:
        raise SystemExit("no broker to run on")

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
                payloads = sample_payloads(sample, args.ceiling_from, brokers[0])
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

        cases = [Case(name, frame, warmup, payload=payload) for name in writers]
        cases += extra_cases(
            args, spark, frame, warmup, dispatchers, fanout, payload_path, brokers[0]
        )
        # A writer's runs on each broker follow each other, so both see about the same load.
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {
            (case.name, broker): [] for case in cases for broker in brokers
        }
        for round_no in range(args.rounds):
            if args.rounds > 1:
                print(f"round {round_no + 1} of {args.rounds}", flush=True)
            for case in cases:
                for broker in brokers:
                    name = case.name
                    try:
                        result = run_writer(case, args, registry.url if registry else None, broker)
                    except Exception as exc:  # noqa: BLE001 (a failing writer must not stop the rest)
                        error = common.short_error(exc)
                        print(f"{name:<20} {broker:<6} FAILED: {error}", flush=True)
                        if args.verbose:
                            traceback.print_exc()
                        runs[name, broker].append(
                            {"writer": name, "broker": broker, "error": error}
                        )
                        continue
                    runs[name, broker].append(result)
                    print(
                        f"{name:<20} {broker:<6} {result['rows_per_s']:>10,} rows/s "
                        f"{result['mb_per_s']:>8.2f} MB/s {result['seconds_median']:>8.2f} s  "
                        f"{result['messages']:,} messages, {result['bytes_per_message']} B/message",
                        flush=True,
                    )
        results = [merge_rounds(r) for r in runs.values()]
    finally:
        spark.stop()
        if registry is not None:
            registry.stop()
        for path in {c.payload for c in cases if c.payload} - {payload_path}:
            os.unlink(path)
        os.unlink(payload_path)

    for broker in brokers:
        add_ratios([r for r in results if r["broker"] == broker])
    print_summary(results)
    report = {
        "bench": "e2e",
        "rows": args.rows,
        "partitions": args.partitions,
        "repeat": args.repeat,
        "rounds": args.rounds,
        "ceiling_payload_bytes": round(average) if average else None,
        "ceiling_from": args.ceiling_from,
        "options": common.EXTRA_OPTIONS,
        "brokers": brokers,
        "environment": common.environment(),
        "results": results,
    }
    common.publish(report, args.output)


if __name__ == "__main__":
    main()
