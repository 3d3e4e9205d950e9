"""Reading TiCDC topics: `spark.read.format("ticdc")` against a hand-rolled consumer and
Spark's own Kafka source, on the same topic in one run, on Tansu and on Apache Kafka side by
side (`--broker tansu|kafka|both`, default both).

    python benchmarks/bench_read.py --rows 500000 --repeat 3
    python benchmarks/bench_read.py --readers ticdc-json --partition-num 1 --writes 8 \
        --min-partitions 2   # one partition read by two tasks

The reference table (bench_e2e.py's: 10 columns, 70% inserts, 20% updates with `_before`,
10% deletes) is written once per encoding and broker by `format("ticdc")` (`ENCODINGS`:
Simple JSON, Simple Avro, debezium, canal-json, avro) to a fresh broker (`tansu`, the
demo's embedded broker, or `kafka`, Apache Kafka in KRaft mode from
tests/support/kafka.py), then read --repeat times by each reader:

| name | what it is |
| --- | --- |
| `ticdc-json` | `spark.read.format("ticdc")` (Simple JSON), `local[2]`, one task per |
|  | Kafka partition, materialised with `write.format("noop")` |
| `ticdc-avro` | the same, `encoding-format=avro` |
| `baseline-json` | one Python process: a group-less `confluent_kafka.Consumer` over |
|  | every partition, `orjson.loads` per message, the DML messages' `data` values |
|  | into column lists, `pyarrow` batches of 10 000 rows (values stay strings: no |
|  | typing, no `_before`, no schema discovery) |
| `kafka-json` | Spark's own Kafka source, what a Spark user writes by hand today: |
|  | `spark.read.format("kafka")` up to the same end offsets, `from_json` of the |
|  | Simple JSON value (`type`, `commitTs`, `database`, `table`, `data`, `old`), |
|  | WATERMARK / BOOTSTRAP / DDL messages dropped, the table's columns cast to the |
|  | types `format("ticdc")` gives, `_before` from `old`; `noop` sink |
| `kafka-avro` | the same over the Simple Avro topic: `from_avro` of the value after its |
|  | union index byte with the Message record of TiCDC's Simple Avro schema |
|  | (`ticdc_sink/codec/simple/message.json`), the DML branch of the payload, each |
|  | column from its branch of the value union |
| `ticdc-debezium`, `kafka-debezium` | the same pair over a Debezium JSON topic (TiDB |
|  | extension on): `from_json` of `payload` (`op`, `before`, `after`, `source`) |
| `ticdc-canal`, `kafka-canal` | over a canal-json topic (TiDB extension on): `from_json` |
|  | of `type`, `data[0]`, `old[0]`, `_tidb.commitTs` |
| `ticdc-confluent`, `kafka-confluent` | over an avro (Confluent) topic through the test |
|  | registry (tests/support/registry.py; TiDB extension on): `from_avro` of the value |
|  | and the key after their 5-byte frame, with the schemas TiCDC registered |
| `floor-confluent` | the floor under `ticdc-confluent`: a Python data source of this script |
|  | (`FloorDataSource`) with `format("ticdc")`'s partitions (one task per Kafka |
|  | partition, its bounds asked on the driver through `TopicLog`), each task reading |
|  | its partition through the package's own `TopicLog.read` (same consumer settings, |
|  | a `Record` per message) and decoding nothing: for every 10 000 messages (every |
|  | avro message is a row) it yields a record batch of `format("ticdc")`'s Arrow |
|  | schema made beforehand (`floor_template`: the first 10 000 rows the package |
|  | reads from the topic, so the same types and about the same bytes), the last one |
|  | sliced to the rows left; `noop` sink. No schema discovery on the driver |
| `handover-confluent` | the same data source without Kafka: each task yields its |
|  | partition's row count in those batches at once: what the Python Data Source's |
|  | Arrow hand-over, the JVM's conversion and the `noop` sink cost alone |

The `kafka-*` readers need Spark's Kafka connector on the JVM, which PySpark does not
ship: the script fetches it with Maven (`mvn` on PATH) into the test cache,
`tests.support.spark_kafka.connector_jars()`: `spark-sql-kafka-0-10_2.13` and
`spark-avro_2.13` of the running PySpark's line (4.2.0 for PySpark 4.3, which Maven Central
does not serve a 4.3 connector for; the module's table says which for each line), without
the jars PySpark already has. `--kafka-jars` (comma-separated; globs allowed) gives other
jar files instead. If the fetch fails they are skipped with a message.

So `handover-confluent` is the hand-over, `floor-confluent` minus it the Kafka fetch in
Python, `ticdc-confluent` minus `floor-confluent` the planning (schema discovery) and the
decoding. The floors read only the avro (Confluent) topic, whose every message is a row
(the count check below holds them to it), and only one task per Kafka partition (not
with `--min-partitions`).

Each Spark reader (`ticdc-*`, `kafka-*`, `floor-*`, `handover-*`) first counts its rows
once, untimed: a reader whose read fails (its error is printed) or counts another number
of rows than were written is skipped with a message (the baseline checks its count at
every read). Then a first read of each reader warms up (Python workers, imports) and is
not timed, and the timed reads go in rounds, each reader once per round (interleaved: a
load that comes and goes on a shared machine falls on every reader alike). On Tansu every
read ends at offsets taken after the writes (tests.support.broker end markers, since
Tansu's high watermarks are wrong after multi-record batches); on Kafka the Spark readers
read to `latest`, as a user does, and the one-process baseline to the high watermarks,
which is what `latest` means there. So on each broker each reader reads the same
messages. Times are wall clock from the call to its return (for ticdc: planning on the
driver, which scans each partition up to its first row, and the tasks). Ratios (`ticdc`
over `kafka`, `ticdc-json` over `baseline-json`, the floors over `kafka` and each other)
are taken within one broker. A summary table, then one JSON line at
the end, every result tagged with its `broker`.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    COLUMN_TYPES,
    DATABASE,
    TABLE,
    add_broker_option,
    available_brokers,
    environment,
    make_spark,
    reference_frame,
    short_error,
    sink_options,
    start_broker,
)
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

#: The topics read, by the suffix of their readers' names: the reference table written by
#: `format("ticdc")` with these options (`reference_table.PROTOCOLS`' writer and options on
#: top; the TiDB extension gives the JSON protocols' commit ts and watermarks, as a
#: consistent read needs, and avro its op and commit ts).
ENCODINGS: dict[str, tuple[str, dict[str, str]]] = {
    "json": ("simple-json", {}),
    "avro": ("simple-avro", {}),
    "debezium": ("debezium", {"enable-tidb-extension": "true"}),
    "canal": ("canal-json", {"enable-tidb-extension": "true"}),
    "confluent": ("avro", {"enable-tidb-extension": "true"}),
}
READERS = (
    "ticdc-json",
    "ticdc-avro",
    "baseline-json",
    "kafka-json",
    "kafka-avro",
    "ticdc-debezium",
    "kafka-debezium",
    "ticdc-canal",
    "kafka-canal",
    "ticdc-confluent",
    "kafka-confluent",
    "floor-confluent",
    "handover-confluent",
)
# What each reader's rows/s is divided by, on the same broker.
RATIOS = {
    "ticdc-json": ("kafka-json", "baseline-json"),
    "ticdc-avro": ("kafka-avro",),
    "ticdc-debezium": ("kafka-debezium",),
    "ticdc-canal": ("kafka-canal",),
    "ticdc-confluent": ("kafka-confluent", "floor-confluent"),
    "floor-confluent": ("kafka-confluent", "handover-confluent"),
    "handover-confluent": ("kafka-confluent",),
}
_TOPIC = f"bench_{DATABASE}_{TABLE}"


def spark_ending(broker: str, topic: str, ends: dict[int, int]) -> str:
    """The Spark readers' `endingOffsets`: on Tansu the end markers' offsets (its
    ListOffsets answer lags), on Kafka `latest`, as a user reads."""
    if broker == "kafka":
        return "latest"
    return json.dumps({topic: {str(p): o for p, o in ends.items()}})


#: `--min-partitions`: the ticdc readers' minPartitions (None: unset, one task per partition).
MIN_PARTITIONS: list[int | None] = [None]


#: `--registry`'s URL, for the `confluent` topic (set by `main`).
REGISTRY: list[str | None] = [None]


def read_options(encoding: str) -> dict[str, str]:
    """What `format("ticdc")` needs to read the `encoding` topic: its protocol (and Simple's
    encoding format), the registry for avro."""
    from tests.support import reference_table

    written = reference_table.PROTOCOLS[ENCODINGS[encoding][0]]
    options = {k: v for k, v in written.items() if k in ("protocol", "encoding-format")}
    if encoding == "confluent":
        assert REGISTRY[0] is not None
        options["schema-registry"] = REGISTRY[0]
    return options


def ticdc_frame(spark: Any, bootstrap: str, topic: str, ending: str, encoding: str) -> Any:
    reader = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .options(**read_options(encoding))
        .option("endingOffsets", ending)
    )
    if MIN_PARTITIONS[0] is not None:
        reader = reader.option("minPartitions", str(MIN_PARTITIONS[0]))
    return reader.load()


def read_baseline(bootstrap: str, topic: str, ends: dict[int, int]) -> int:
    import confluent_kafka
    import orjson
    import pyarrow as pa

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-read-baseline",
            "enable.auto.commit": "false",
        }
    )
    rows = 0
    columns: dict[str, list[Any]] = {}
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in ends])
        left = {p: end for p, end in ends.items() if end > 0}
        while left:
            for message in consumer.consume(2000, timeout=1.0):
                partition, offset = message.partition(), message.offset()
                if partition not in left or offset >= left[partition]:
                    continue
                if offset == left[partition] - 1:
                    del left[partition]
                event = orjson.loads(message.value())
                if event.get("type") not in ("INSERT", "UPDATE", "DELETE"):
                    continue
                image = event.get("data") or event.get("old") or {}
                for name, value in image.items():
                    columns.setdefault(name, []).append(value)
                rows += 1
                if rows % 10_000 == 0:
                    pa.RecordBatch.from_pydict(columns)
                    columns = {}
        if columns:
            pa.RecordBatch.from_pydict(columns)
    finally:
        consumer.close()
    return rows


_DML_TYPES = ("INSERT", "UPDATE", "DELETE")


def simple_avro_message_schema() -> str:
    """The Message branch of Simple Avro's schema as a schema of its own, for `from_avro`
    (Spark's Avro reader takes a record, not a top-level union): the decoder's own
    (`codec.simple.avro_values.message_record_schema`)."""
    from ticdc_sink.codec.simple.avro_values import message_record_schema

    return json.dumps(message_record_schema()[1])


def _spark_type(mysql: str) -> str:
    """The Spark type `format("ticdc")` reads a reference-table column as (read/rows.py):
    integers as int / bigint, double, decimal(p,s); dates, datetimes and text as strings."""
    base = mysql.split("(")[0]
    if base in ("tinyint", "smallint", "mediumint", "int"):
        return "int"
    if base in ("bigint", "double", "float"):
        return base
    if base == "decimal":
        return mysql
    return "string"


def _avro_branch(mysql: str) -> str:
    """The branch of Simple Avro's value union a reference-table column travels in
    (`long, float, double, string, bytes, ...` -> Spark's `member0`..)."""
    base = mysql.split("(")[0]
    if base in ("tinyint", "smallint", "mediumint", "int", "bigint"):
        return "member0"
    return {"float": "member1", "double": "member2"}.get(base, "member3")


def _change_rows(event: Any, value: Any) -> list[Any]:
    """The ticdc reader's output columns from a decoded Simple DML message (`event`, a
    struct with TiCDC's field names, JSON and Avro alike): the table's columns (from `data`,
    or `old` for a DELETE), `_op`, `_commit_ts`, `_before` (an UPDATE's old row),
    `_database`, `_table`. `value(image, column, mysql_type)` reads one column."""
    from pyspark.sql import functions as F

    image = F.coalesce(event["data"], event["old"])
    before = F.struct(*[value(event["old"], c, t).alias(c) for c, t in COLUMN_TYPES.items()])
    return [
        *[value(image, c, t).alias(c) for c, t in COLUMN_TYPES.items()],
        event["type"].alias("_op"),
        event["commitTs"].alias("_commit_ts"),
        F.when(event["type"] == "UPDATE", before).alias("_before"),
        event["database"].alias("_database"),
        event["table"].alias("_table"),
    ]


def kafka_frame(spark: Any, bootstrap: str, topic: str, ending: str, encoding: str) -> Any:
    """Spark's Kafka source + from_json / from_avro: the DataFrame a Spark user writes by
    hand for a Simple topic, with the same rows and columns as `format("ticdc")`."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", ending)
        .load()
    )
    if encoding in ("debezium", "canal", "confluent"):
        return _KAFKA_FRAMES[encoding](spark, raw, topic)
    if encoding == "json":
        image = T.StructType([T.StructField(c, T.StringType()) for c in COLUMN_TYPES])
        schema = T.StructType(
            [
                T.StructField("database", T.StringType()),
                T.StructField("table", T.StringType()),
                T.StructField("type", T.StringType()),
                T.StructField("commitTs", T.LongType()),
                T.StructField("data", image),
                T.StructField("old", image),
            ]
        )
        message = F.from_json(F.col("value").cast("string"), schema)
        dml = raw.select(message.alias("m")).where(F.col("m.type").isin(*_DML_TYPES))
        return dml.select(
            *_change_rows(F.col("m"), lambda image, c, t: image[c].cast(_spark_type(t)))
        )

    from pyspark.sql.avro.functions import from_avro

    # The body after the union index (one byte, 0x16: branch 11, Message) is a Message
    # record. Spark reads an Avro union as a struct of `member<i>` fields, one per branch.
    body = F.expr("substring(value, 2)")
    message = from_avro(body, simple_avro_message_schema())
    dml = raw.select(message.alias("m")).where(F.col("m.type") == "DML")
    return dml.select(
        *_change_rows(
            F.col("m.payload.member3"),
            lambda image, c, t: image[c][_avro_branch(t)].cast(_spark_type(t)),
        )
    )


def _typed(image: Any, column: str, mysql: str) -> Any:
    return image[column].cast(_spark_type(mysql))


def _rows(image: Any, before: Any, op: Any, commit_ts: Any, database: Any, table: Any):
    """The ticdc reader's output columns from the parts of a decoded message, each a
    Column: the row's image (the new row, or the old one for a DELETE), the old row of an
    UPDATE, the change type as `INSERT` / `UPDATE` / `DELETE`."""
    from pyspark.sql import functions as F

    old = F.struct(*[_typed(before, c, t).alias(c) for c, t in COLUMN_TYPES.items()])
    return [
        *[_typed(image, c, t).alias(c) for c, t in COLUMN_TYPES.items()],
        op.alias("_op"),
        commit_ts.alias("_commit_ts"),
        F.when(op == "UPDATE", old).alias("_before"),
        database.alias("_database"),
        table.alias("_table"),
    ]


def _strings() -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField(c, T.StringType()) for c in COLUMN_TYPES])


def kafka_debezium(spark: Any, raw: Any, topic: str) -> Any:
    """Debezium JSON: `payload`'s `op`, `before`, `after` and `source` (`db`, `table`,
    TiCDC's `commit_ts`); watermarks (`op` `m`) and DDL events dropped."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    source = T.StructType(
        [
            T.StructField("db", T.StringType()),
            T.StructField("table", T.StringType()),
            T.StructField("commit_ts", T.LongType()),
        ]
    )
    payload = T.StructType(
        [
            T.StructField("op", T.StringType()),
            T.StructField("before", _strings()),
            T.StructField("after", _strings()),
            T.StructField("source", source),
        ]
    )
    schema = T.StructType([T.StructField("payload", payload)])
    m = F.from_json(F.col("value").cast("string"), schema)["payload"]
    dml = raw.select(m.alias("m")).where(F.col("m.op").isin("c", "u", "d"))
    p = F.col("m")
    op = F.when(p["op"] == "c", "INSERT").when(p["op"] == "u", "UPDATE").otherwise("DELETE")
    return dml.select(
        *_rows(
            F.coalesce(p["after"], p["before"]),
            p["before"],
            op,
            p["source"]["commit_ts"],
            p["source"]["db"],
            p["source"]["table"],
        )
    )


def kafka_canal(spark: Any, raw: Any, topic: str) -> Any:
    """canal-json: one row per message in `data` (and `old` for an UPDATE), every value a
    string; the commit ts in `_tidb`; watermarks (`TIDB_WATERMARK`) and DDL dropped."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("database", T.StringType()),
            T.StructField("table", T.StringType()),
            T.StructField("type", T.StringType()),
            T.StructField("data", T.ArrayType(_strings())),
            T.StructField("old", T.ArrayType(_strings())),
            T.StructField("_tidb", T.StructType([T.StructField("commitTs", T.LongType())])),
        ]
    )
    m = F.from_json(F.col("value").cast("string"), schema)
    dml = raw.select(m.alias("m")).where(F.col("m.type").isin(*_DML_TYPES))
    p = F.col("m")
    return dml.select(
        *_rows(
            p["data"][0],
            p["old"][0],
            p["type"],
            p["_tidb"]["commitTs"],
            p["database"],
            p["table"],
        )
    )


def registry_schema(subject: str) -> str:
    """The latest schema registered under `subject` (the Confluent API)."""
    import urllib.request

    assert REGISTRY[0] is not None
    url = f"{REGISTRY[0]}/subjects/{subject}/versions/latest"
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - loopback
        return json.loads(answer.read())["schema"]


def kafka_confluent(spark: Any, raw: Any, topic: str) -> Any:
    """avro (Confluent): `from_avro` of the value after its 5-byte frame with the value
    schema TiCDC registered (the one every message of this topic names), the key's
    columns from the key for a tombstone; the op and commit ts from the TiDB extension's
    `_tidb_op` and `_tidb_commit_ts`."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    value = from_avro(F.expr("substring(value, 6)"), registry_schema(f"{topic}-value"))
    key = from_avro(F.expr("substring(key, 6)"), registry_schema(f"{topic}-key"))
    decoded = raw.select(value.alias("v"), key.alias("k"))
    v, k = F.col("v"), F.col("k")
    image = F.struct(
        *[F.coalesce(v[c], k[c]).alias(c) if c == "id" else v[c].alias(c) for c in COLUMN_TYPES]
    )
    op = (
        F.when(v.isNull() | (v["_tidb_op"] == "d"), "DELETE")
        .when(v["_tidb_op"] == "u", "UPDATE")
        .otherwise("INSERT")
    )
    return decoded.select(
        *_rows(image, image, op, v["_tidb_commit_ts"], F.lit(DATABASE), F.lit(TABLE))
    )


_KAFKA_FRAMES = {
    "debezium": kafka_debezium,
    "canal": kafka_canal,
    "confluent": kafka_confluent,
}


#: The floors' data source name and its template file (`floor_template`, set by read_all).
_FLOOR = "bench_floor"
FLOOR_TEMPLATE: list[str | None] = [None]


def floor_template(bootstrap: str, topic: str, encoding: str, into: Path) -> Path:
    """The floors' record batch (module docstring): the first `BATCH_ROWS` rows the
    package reads from `topic` (its own plan and task read, on the driver, untimed), in an
    Arrow IPC file under `into`."""
    import pyarrow as pa

    from ticdc_sink.read.options import ReadConfig
    from ticdc_sink.read.plan import plan_read, plan_tasks
    from ticdc_sink.read.scan import BATCH_ROWS, read_parts

    options = {"kafka.bootstrap.servers": bootstrap, "topic": topic, **read_options(encoding)}
    plan = plan_read(ReadConfig.from_options(options))
    tasks, known = plan_tasks(plan)
    batches = read_parts(plan.config, plan.table, known, max(tasks, key=len))
    first = pa.Table.from_batches([next(iter(batches))]).combine_chunks().to_batches()[0]
    assert first.num_rows == BATCH_ROWS, f"the template has {first.num_rows} rows"
    path = into / f"floor-{encoding}.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, first.schema) as out:
        out.write_batch(first)
    return path


class FloorDataSource(DataSource):
    """`floor-*` and `handover-*` (module docstring). Options: `bootstrap`, `topic`,
    `template` (the Arrow file), `fetch` ("true": read the partitions through `TopicLog`)."""

    @classmethod
    def name(cls) -> str:
        return _FLOOR

    def schema(self) -> Any:
        import pyarrow as pa

        from ticdc_sink.spark_arrow import read_spark_schema

        with pa.memory_map(self.options["template"]) as source:
            return read_spark_schema(pa.ipc.open_file(source).schema)

    def reader(self, schema: Any) -> FloorReader:
        return FloorReader(dict(self.options))


class FloorPartition(InputPartition):
    def __init__(self, partition: int, start: int, end: int) -> None:
        super().__init__(partition)
        self.partition, self.start, self.end = partition, start, end


class FloorReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.options = options

    def _config(self) -> Any:
        from ticdc_sink.read.options import ReadConfig

        return ReadConfig.from_options(
            {"kafka.bootstrap.servers": self.options["bootstrap"], "topic": self.options["topic"]}
        )

    def partitions(self) -> list[FloorPartition]:
        # As format("ticdc") plans "latest": the partitions' bounds through a TopicLog.
        from ticdc_sink.read.consumer import TopicLog

        with TopicLog(self._config()) as log:
            bounds = log.bounds()
        return [FloorPartition(p, low, high) for p, (low, high) in bounds.items() if high > low]

    def read(self, partition: Any) -> Any:
        import pyarrow as pa

        from ticdc_sink.read.consumer import TopicLog
        from ticdc_sink.read.offsets import OffsetRange

        with pa.memory_map(self.options["template"]) as source:
            template = pa.ipc.open_file(source).get_batch(0)
        size = template.num_rows
        if self.options["fetch"] != "true":
            whole, left = divmod(partition.end - partition.start, size)
            yield from [template] * whole
            if left:
                yield template.slice(0, left)
            return
        config = self._config()
        offsets = OffsetRange(config.topic, partition.partition, partition.start, partition.end)
        rows = 0
        with TopicLog(config) as log:
            for _ in log.read(offsets):
                rows += 1
                if rows == size:
                    yield template
                    rows = 0
        if rows:
            yield template.slice(0, rows)


def floor_frame(spark: Any, reader: str, bootstrap: str, topic: str) -> Any:
    """A `floor-*` or `handover-*` reader's DataFrame (module docstring)."""
    assert FLOOR_TEMPLATE[0] is not None
    return (
        spark.read.format(_FLOOR)
        .option("bootstrap", bootstrap)
        .option("topic", topic)
        .option("template", FLOOR_TEMPLATE[0])
        .option("fetch", str(reader.startswith("floor-")).lower())
        .load()
    )


def spark_frame(
    reader: str, spark: Any, bootstrap: str, topic: str, ending: str, encoding: str
) -> Any:
    """A Spark reader's (`ticdc-*`, `kafka-*`, `floor-*`, `handover-*`) DataFrame, made and
    so planned anew at each call, as a user's read is."""
    if reader.startswith(("floor-", "handover-")):
        return floor_frame(spark, reader, bootstrap, topic)
    make = ticdc_frame if reader.startswith("ticdc-") else kafka_frame
    return make(spark, bootstrap, topic, ending, encoding)


def kafka_jars(spec: str | None) -> list[str]:
    """--kafka-jars: comma-separated jar paths or globs, expanded and checked."""
    jars: list[str] = []
    for item in filter(None, (spec or "").split(",")):
        found = sorted(glob.glob(item))
        if not found:
            raise SystemExit(f"--kafka-jars: nothing matches {item!r}")
        jars += [str(Path(j).resolve()) for j in found if j.endswith(".jar")]
    return jars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2, help="Spark partitions written")
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--spark-memory", default="4g")
    parser.add_argument(
        "--kafka-jars",
        help="Spark's Kafka connector and its dependencies as jar files (comma-separated, "
        "globs allowed) for the kafka-* readers, instead of the ones fetched with Maven",
    )
    parser.add_argument(
        "--min-partitions",
        type=int,
        help="the ticdc readers' minPartitions (a large partition read by several tasks)",
    )
    parser.add_argument(
        "--writes",
        type=int,
        default=1,
        help="write the frame in this many appends (each its commit ts and watermark: "
        "where minPartitions may cut under consistency=watermark)",
    )
    parser.add_argument(
        "--partition-num",
        type=int,
        help="the writer's partition-num: only partitions below it get messages",
    )
    parser.add_argument("--output")
    add_broker_option(parser)
    args = parser.parse_args()
    MIN_PARTITIONS[0] = args.min_partitions
    readers = [r for r in args.readers.split(",") if r]
    jars = kafka_jars(args.kafka_jars)
    if not jars and any(r.startswith("kafka-") for r in readers):
        from tests.support.maven import MavenError
        from tests.support.spark_kafka import connector_jars

        try:
            jars = [str(jar) for jar in connector_jars()]
        except (MavenError, LookupError) as exc:
            print(
                "kafka-json, kafka-avro: skipped, Spark's Kafka connector could not be "
                f"fetched: {short_error(exc)}",
                flush=True,
            )
            readers = [r for r in readers if not r.startswith("kafka-")]
    connector = {"spark.jars": ",".join(jars)} if jars else {}

    brokers = available_brokers(args.broker)
    if not brokers:
        raise SystemExit("no broker to run on")

    floors = [r for r in readers if r.startswith(("floor-", "handover-"))]
    if floors and (
        args.min_partitions is not None or not all(r.endswith("-confluent") for r in floors)
    ):
        parser.error("the floor readers read the confluent topic, one task per partition")
    spark = make_spark(args.spark_memory, extra=connector)
    if floors:
        spark.dataSource.register(FloorDataSource)
    frame = reference_frame(spark, args.rows, args.partitions).cache()
    frame.count()
    results: list[dict[str, Any]] = []
    registry = None
    if any(r.endswith("-confluent") for r in readers):
        from tests.support.registry import TestSchemaRegistry

        registry = TestSchemaRegistry().start()
        REGISTRY[0] = registry.url
    try:
        for encoding in ENCODINGS:
            wanted = [r for r in readers if r.endswith(f"-{encoding}")]
            if not wanted:
                continue
            for broker in brokers:
                results += read_all(spark, frame, broker, encoding, wanted, args)
    finally:
        spark.stop()
        if registry is not None:
            registry.stop()
    add_ratios(results)
    print_summary(results)
    report = {
        "rows": args.rows,
        "repeat": args.repeat,
        "min_partitions": args.min_partitions,
        "writes": args.writes,
        "partition_num": args.partition_num,
        "brokers": brokers,
        "results": results,
        "environment": environment(),
    }
    if connector:
        report["kafka_connector"] = {"jars": [Path(j).name for j in jars]}
    line = json.dumps(report)
    print(line)
    if args.output:
        with open(args.output, "w") as out:
            out.write(line + "\n")


def read_all(
    spark: Any, frame: Any, broker_name: str, encoding: str, readers: list[str], args: Any
) -> list[dict[str, Any]]:
    """`frame` written in `encoding` to a fresh `broker_name` broker, then read by each of
    `readers`: a Spark reader's rows counted once and a warm-up read, then --repeat rounds
    in which each reader reads once, interleaved (a load that comes and goes on a shared
    machine falls on every reader alike); their results."""
    with start_broker(broker_name) as broker, tempfile.TemporaryDirectory() as scratch:
        writer, extra = ENCODINGS[encoding]
        options = {**sink_options(broker.bootstrap, writer, REGISTRY[0]), **extra}
        if args.partition_num is not None:
            options["partition-num"] = str(args.partition_num)
        step = -(-args.rows // args.writes)
        for first in range(0, args.rows, step):  # ids rise with the commit ts
            part = frame.where((frame.id >= first) & (frame.id < first + step))
            part.write.format("ticdc").mode("append").options(**options).save()
        ends = broker.end_offsets(_TOPIC)  # Tansu: end markers; Kafka: high watermarks
        print(f"topic {_TOPIC}: {len(ends)} partition(s), {args.writes} write(s)", flush=True)
        ending = spark_ending(broker_name, _TOPIC, ends)
        rows = args.rows  # one change per frame row (no update changes a key)
        if any(r.startswith(("floor-", "handover-")) for r in readers):
            template = floor_template(broker.bootstrap, _TOPIC, encoding, Path(scratch))
            FLOOR_TEMPLATE[0] = str(template)
        source = (spark, broker.bootstrap, _TOPIC, ending, encoding)

        def read(reader: str) -> float:
            start = time.perf_counter()
            if reader == "baseline-json":
                assert read_baseline(broker.bootstrap, _TOPIC, ends) == rows
            else:
                spark_frame(reader, *source).write.format("noop").mode("overwrite").save()
            return time.perf_counter() - start

        running = []
        for reader in readers:
            name = f"{reader} on {broker_name}"
            if reader != "baseline-json":
                # An extra untimed read: does the reader load (Spark's Kafka connector), and
                # does it read every row written?
                try:
                    got = spark_frame(reader, *source).count()
                except Exception as exc:  # noqa: BLE001 - reported, the others still run
                    print(f"{name:>24}: skipped, {short_error(exc)}", flush=True)
                    continue
                if got != rows:
                    print(f"{name:>24}: skipped, read {got} rows, wrote {rows}", flush=True)
                    continue
            read(reader)  # warms up, untimed
            running.append(reader)
        times: dict[str, list[float]] = {reader: [] for reader in running}
        for _ in range(args.repeat):
            for reader in running:
                times[reader].append(read(reader))
    results = []
    for reader in running:
        result = {
            "reader": reader,
            "broker": broker_name,
            "rows": rows,
            "seconds": [round(t, 3) for t in times[reader]],
            "median_rows_per_s": round(rows / statistics.median(times[reader])),
            "best_rows_per_s": round(rows / min(times[reader])),
        }
        print(f"{reader + ' on ' + broker_name:>24}: {result}", flush=True)
        results.append(result)
    return results


def add_ratios(results: list[dict[str, Any]]) -> None:
    """`vs_<reader>`: a reader's median rows/s over another's on the same broker (RATIOS)."""
    found = {(r["broker"], r["reader"]): r for r in results}
    for result in results:
        for other in RATIOS.get(result["reader"], ()):
            reference = found.get((result["broker"], other))
            if reference is not None:
                ratio = result["median_rows_per_s"] / reference["median_rows_per_s"]
                result[f"vs_{other}"] = round(ratio, 3)


def print_summary(results: list[dict[str, Any]]) -> None:
    """A line per reader and broker, a reader's brokers next to each other."""
    print()
    print(f"{'reader':<14} {'broker':<6} {'seconds':>18} {'median rows/s':>14}  ratios")
    for reader in READERS:
        for r in (r for r in results if r["reader"] == reader):
            seconds = " / ".join(f"{s:.2f}" for s in r["seconds"])
            ratios = ", ".join(f"vs {k[3:]} {v:.2f}x" for k, v in r.items() if k.startswith("vs_"))
            print(
                f"{reader:<14} {r['broker']:<6} {seconds:>18} {r['median_rows_per_s']:>14,}  "
                + ratios
            )


if __name__ == "__main__":
    main()
