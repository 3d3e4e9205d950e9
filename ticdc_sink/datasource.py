"""The Spark-facing classes: `format("ticdc")`. Thin by design.

Spark builds these on the driver (options -> SinkConfig, validated before any task runs),
pickles the writer to every task, and calls `commit` on the driver once every task of the
batch succeeded. Clients (producers) are made inside `write()` and `commit()` only.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import logging
import os
import pathlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import ArrayType, DataType, MapType, StructType, TimestampType

from ticdc_sink import tso
from ticdc_sink.config import DDL_PROTOCOLS, SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.producer import KafkaProducer, check_client_config
from ticdc_sink.schema import table_schema_from_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer import (
    TaskReport,
    WritePlan,
    commit_batch,
    make_plan,
    send_schema_change,
    write_batches,
)

try:  # PySpark 4.1+
    from pyspark.sql.datasource import DataSourceStreamArrowWriter
except ImportError:  # PySpark 4.0: Row-based stream writer, same write loop
    DataSourceStreamArrowWriter = None

__all__ = ["TiCDCCommitMessage", "TiCDCDataSource"]

logger = logging.getLogger(__name__)

# Test-only fault injection for the reliability tests (tests/integration/test_task_retries.py
# and test_simple_streaming.py). NOT options and NOT public API: environment variables, so
# no user can set them by accident through `.option(...)`, read where Spark runs the code
# (executors and driver-side Python workers inherit the driver's environment in local mode).
# - _TICDC_SINK_TEST_FAIL_FIRST_ATTEMPT=<n>: attempt 0 of every write task sends n messages,
#   waits until the broker acknowledged them, then raises, so Spark retries the task
#   after real sends (needs a master with retries, e.g. local[2,3]).
# - _TICDC_SINK_TEST_HANG_AFTER_COMMIT=<batchId>:<file>: the streaming commit of that
#   micro-batch sends its watermark and records it, creates <file>, then hangs, so the test
#   can kill the driver after the sink's commit and before Spark records the batch.
_FAIL_FIRST_ATTEMPT_ENV = "_TICDC_SINK_TEST_FAIL_FIRST_ATTEMPT"
_HANG_AFTER_COMMIT_ENV = "_TICDC_SINK_TEST_HANG_AFTER_COMMIT"


class TiCDCCommitMessage(WriterCommitMessage):
    """A task's report, carried from the executor to the driver's commit step."""

    def __init__(self, report: TaskReport) -> None:
        self.report = report

    def __repr__(self) -> str:
        return f"TiCDCCommitMessage({self.report!r})"


class TiCDCDataSource(DataSource):
    """Writes DataFrame rows to Kafka as TiCDC row-change events.

    Name: `ticdc`. Options: see the README's options table (`ticdc_sink.config`).
    """

    @classmethod
    def name(cls) -> str:
        return "ticdc"

    def writer(self, schema: StructType, overwrite: bool) -> TiCDCBatchWriter:
        if overwrite:
            raise ConfigError(
                "mode 'overwrite' is not supported: a change stream cannot overwrite a "
                "topic; use mode('append')",
                option="mode",
                value="overwrite",
            )
        _log_to_stderr()
        config = _config(self.options)
        _warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout_fields())
        commit_ts = tso.now()
        floor = None
        state = None
        if config.checkpoint_location:
            state = SinkState(config.checkpoint_location)
            state.check_writable()
            floor = state.watermark_floor(None)
            commit_ts = max(commit_ts, (floor or 0) + 1)
        plan = make_plan(config, schema, commit_ts, batch_id=None, watermark_floor=floor)
        _announce_schema(plan, state)
        return TiCDCBatchWriter(plan)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        if overwrite:
            raise ConfigError(
                "output mode 'complete' is not supported: a change stream cannot re-send "
                "the whole result table every batch; use outputMode('append')",
                option="outputMode",
                value="complete",
            )
        _log_to_stderr()
        config = _config(self.options)
        if not config.checkpoint_location:
            raise ConfigError(
                "streaming writes need option 'checkpointLocation'", option="checkpointLocation"
            )
        _warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout_fields())
        state = SinkState(config.checkpoint_location)
        state.check_writable()
        batch_id = state.current_batch_id()
        floor = state.watermark_floor(batch_id)  # before commit_ts_for_batch marks it planned
        commit_ts = state.commit_ts_for_batch(batch_id)
        plan = make_plan(config, schema, commit_ts, batch_id=batch_id, watermark_floor=floor)
        _announce_schema(plan, state)
        if DataSourceStreamArrowWriter is None:
            return TiCDCStreamRowWriter(plan, schema)
        return TiCDCStreamWriter(plan)


def _config(options: Any) -> SinkConfig:
    config = SinkConfig.from_options(dict(options))
    if config.ignored:
        _warn_ignored(config.ignored)
    # librdkafka's verdict on the kafka.* settings, here rather than in every task.
    for warning in check_client_config(config.kafka):
        _warn_client_setting(warning)
    return config


# Kafka records as Spark spells them: the input of its Kafka sink (`key`, `value`, `topic`,
# `partition`, `headers`), and the output of its Kafka source (also `offset`, `timestamp`,
# `timestampType`), which a user may hand straight to this sink.
_KAFKA_RECORD_COLUMNS = frozenset(
    {"key", "value", "topic", "partition", "headers", "offset", "timestamp", "timestamptype"}
)


def _warn_if_kafka_shaped(names: tuple[str, ...], metadata: dict[str, str]) -> None:
    """A frame of Kafka records (built for Spark's Kafka sink, or read by its Kafka
    source) is written here as a table whose columns are named key, value, ...: say so,
    once per process and frame shape (Spark asks for a stream writer twice per
    micro-batch, in a reused worker)."""
    reserved = {name.lower() for name in metadata.values()}
    table_columns = tuple(name for name in names if name.lower() not in reserved)
    _warn_kafka_shaped(table_columns)


@functools.cache
def _warn_kafka_shaped(names: tuple[str, ...]) -> None:
    folded = {name.lower() for name in names}
    if "value" in folded and folded <= _KAFKA_RECORD_COLUMNS:
        logger.warning(
            "ticdc: the DataFrame's columns (%s) are Kafka records, as Spark's Kafka sink "
            "takes them and its Kafka source reads them; this sink takes a table's columns "
            "and writes each row as a change event of that table, so they are written as "
            "table columns. Select the table's columns instead (README, 'The input contract')",
            ", ".join(names),
        )


# How Spark's default log4j console pattern prints a line (`%d{yy/MM/dd HH:mm:ss} %p %c{1}:
# %m`), so the sink's lines read like the driver's own.
_STDERR_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _log_to_stderr() -> None:
    """Give the sink's log lines a way out of Spark's driver-side Python workers.

    Spark runs `writer()`/`streamWriter()` and `commit()`/`abort()` in Python worker
    processes it starts on the driver, where Python logging is not configured: the sink's
    INFO lines (the batch report among them) were dropped and its warnings printed bare.
    Spark copies those workers' stderr to the driver's stderr. So, where logging is not
    configured (no handler on the root logger nor on `ticdc_sink`), the `ticdc_sink`
    logger gets one stderr handler at INFO; configured logging (a user's, or PySpark's
    own worker log capture) is left alone. Deliberately here, in the Spark-facing code,
    and never on import (style §8).
    """
    package = logging.getLogger("ticdc_sink")
    if package.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(_STDERR_FORMAT, datefmt="%y/%m/%d %H:%M:%S"))
    package.addHandler(handler)
    if package.level == logging.NOTSET:
        package.setLevel(logging.INFO)


@functools.cache
def _warn_client_setting(warning: str) -> None:
    logger.warning("ticdc: librdkafka: %s", warning)


@functools.cache
def _warn_ignored(ignored: tuple[str, ...]) -> None:
    # Once per process: Spark asks for a stream writer twice per micro-batch.
    logger.warning(
        "ticdc: ignored TiCDC settings that mean nothing to this sink: %s", "; ".join(ignored)
    )


def _announce_schema(plan: WritePlan, state: SinkState | None) -> None:
    """DDL protocols: send the table's DDL message before the batch's rows when its
    schema changed since the last committed batch (known from the checkpoint location)."""
    table = plan.tables.named_table
    if table is None or plan.config.codec.protocol not in DDL_PROTOCOLS:
        return
    batch_id = plan.batch_id
    if state is not None and batch_id is not None and state.ddl_sent_for_batch(batch_id):
        return
    stored = state.last_table_schema(table.database, table.table) if state else None
    previous = table_schema_from_json(stored) if stored else None
    sent = send_schema_change(plan, previous)
    if sent is not None and state is not None and batch_id is not None:
        state.record_ddl_sent(batch_id, sent)


class _WriterMixin:
    """The parts shared by the batch and the stream writers."""

    plan: WritePlan

    def _write(self, batches: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        if self.plan.batch_id is not None and context is not None:
            task_batch = context.getLocalProperty("streaming.sql.batchId")
            if task_batch is not None and int(task_batch) != self.plan.batch_id:
                raise RuntimeError(
                    f"ticdc: the writer was planned for micro-batch {self.plan.batch_id} but "
                    f"runs in micro-batch {task_batch}; replays would not be byte-identical"
                )
        producer_factory: Callable[..., Any] = KafkaProducer
        fail_after = os.environ.get(_FAIL_FIRST_ATTEMPT_ENV)
        if fail_after and context is not None and context.attemptNumber() == 0:
            producer_factory = functools.partial(_FirstAttemptFails, fail_after=int(fail_after))
        return TiCDCCommitMessage(
            write_batches(
                batches, self.plan, partition_id=partition_id, producer_factory=producer_factory
            )
        )

    def _commit(self, messages: list[Any]) -> None:
        _log_to_stderr()
        config = self.plan.config
        state = SinkState(config.checkpoint_location) if config.checkpoint_location else None
        report = commit_batch(
            self.plan, [m.report if m is not None else None for m in messages], state=state
        )
        hang = os.environ.get(_HANG_AFTER_COMMIT_ENV)
        if hang and self.plan.batch_id is not None:
            batch_id, _, marker = hang.partition(":")
            if int(batch_id) == self.plan.batch_id:
                pathlib.Path(marker).write_text(str(report["watermark"]))
                while True:  # until the test kills the driver
                    time.sleep(1)

    def _abort(self, messages: list[Any]) -> None:
        _log_to_stderr()
        done = [m for m in messages if m is not None]
        logger.warning(
            "ticdc write aborted: %d of %d tasks reported success; messages already sent "
            "stay in Kafka (at-least-once) and no watermark was sent for this batch",
            len(done),
            len(messages),
        )


class _FirstAttemptFails(KafkaProducer):
    """Test-only (see `_FAIL_FIRST_ATTEMPT_ENV`): a producer that fails its task once
    `fail_after` messages were sent and acknowledged."""

    def __init__(self, *args: Any, fail_after: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fail_after = fail_after

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        super().send(topic, partition, key, value)
        if self.sent == self._fail_after:
            self.flush()
            raise RuntimeError(
                f"ticdc: injected test failure after {self.sent} acknowledged messages "
                f"({_FAIL_FIRST_ATTEMPT_ENV})"
            )


class TiCDCBatchWriter(_WriterMixin, DataSourceArrowWriter):
    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
        return self._write(iterator)

    def commit(self, messages: list[Any]) -> None:
        self._commit(messages)

    def abort(self, messages: list[Any]) -> None:
        self._abort(messages)


if DataSourceStreamArrowWriter is not None:

    class TiCDCStreamWriter(_WriterMixin, DataSourceStreamArrowWriter):
        def __init__(self, plan: WritePlan) -> None:
            self.plan = plan

        def write(self, iterator: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
            return self._write(iterator)

        def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
            self._commit(messages)

        def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
            self._abort(messages)


class TiCDCStreamRowWriter(_WriterMixin, DataSourceStreamWriter):
    """PySpark 4.0 has no Arrow stream writer: turn Rows back into record batches and run
    the same loop. Spark hands naive datetimes in the executor's local zone here, so
    TIMESTAMP values are made aware before Arrow sees them."""

    _CHUNK = 10_000

    def __init__(self, plan: WritePlan, schema: StructType) -> None:
        self.plan = plan
        self.schema = schema

    def write(self, iterator: Iterator[Any]) -> TiCDCCommitMessage:
        return self._write(_rows_to_batches(iterator, self.schema, self._CHUNK))

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        self._commit(messages)

    def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        self._abort(messages)


def _rows_to_batches(
    rows: Iterator[Any], schema: StructType, chunk: int
) -> Iterator[pa.RecordBatch]:
    """Rows -> record batches shaped like the Arrow writer's, `chunk` rows each.

    Rows carry TIMESTAMP values as naive datetimes in the executor's local zone, at any
    depth (`_before`, arrays, maps); Arrow would read a naive value as UTC, so each one is
    made aware first. TIMESTAMP_NTZ values stay naive; 4.0's `bytearray` binaries Arrow
    copies into `binary` as they are.
    """
    arrow_schema = _arrow_schema(schema)
    make_aware = _aware(schema)
    buffer: list[dict[str, Any]] = []
    for row in rows:
        record = row.asDict(recursive=True)
        buffer.append(make_aware(record) if make_aware is not None else record)
        if len(buffer) >= chunk:
            yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)
            buffer = []
    if buffer:
        yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)


def _arrow_schema(schema: StructType) -> pa.Schema:
    """Spark's own type mapping, so both stream writers see the same Arrow types.

    The TIMESTAMP zone argument changed after 4.0 (`timestamp_utc=True` became `timezone=`,
    which has no default); UTC either way: aware values convert to it exactly.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


def _aware(data_type: DataType) -> Callable[[Any], Any] | None:
    """A function that makes the naive local datetimes inside a (`asDict`-ed) value of
    `data_type` aware, or None when the type holds no TIMESTAMP, so most rows cost nothing."""
    if isinstance(data_type, TimestampType):
        return _aware_datetime
    if isinstance(data_type, StructType):
        fields = [(f.name, fix) for f in data_type.fields if (fix := _aware(f.dataType))]
        if not fields:
            return None

        def struct(value: dict[str, Any] | None) -> dict[str, Any] | None:
            if value is not None:
                for name, fix in fields:
                    value[name] = fix(value[name])
            return value

        return struct
    if isinstance(data_type, ArrayType):
        element = _aware(data_type.elementType)
        if element is None:
            return None
        return lambda value: None if value is None else [element(v) for v in value]
    if isinstance(data_type, MapType):
        key, item = _aware(data_type.keyType), _aware(data_type.valueType)
        if key is None and item is None:
            return None
        key, item = key or _same, item or _same
        return lambda value: None if value is None else {key(k): item(v) for k, v in value.items()}
    return None


def _aware_datetime(value: dt.datetime | None) -> dt.datetime | None:
    # `astimezone()` reads a naive value in the process's local zone and honours `fold`,
    # which Spark's `fromtimestamp` sets for the repeated hour when clocks go back.
    if value is not None and value.tzinfo is None:
        return value.astimezone()
    return value


def _same(value: Any) -> Any:
    return value
