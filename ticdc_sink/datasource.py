"""The Spark-facing classes: `format("ticdc")`. Thin by design.

Spark builds these on the driver (options -> SinkConfig, validated before any task runs),
pickles the writer to every task, and calls `commit` on the driver once every task of the
batch succeeded. Clients (producers) are made inside `write()` and `commit()` only.

A streaming query's checkpoint: with the `checkpointLocation` option the driver plans
each micro-batch from it (batch id, commit ts, DDL). A query that names no location gets
`<spark.sql.streaming.checkpointLocation>/<queryName>` from Spark, and that session conf
reaches no Python code on the driver, only the tasks (Spark hands SQL confs to tasks as
local properties): their tasks find the checkpoint, fix the batch's commit ts there (the
same value in every task, see `SinkState.commit_ts_for_batch`) and tell the commit step
where it is through their commit messages.
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

import attrs
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
from ticdc_sink.checkpoint import SESSION_ROOT_CONF, session_location
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.producer import KafkaProducer, check_client_config
from ticdc_sink.schema import table_schema_from_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer import (
    TaskReport,
    WritePlan,
    commit_batch,
    make_plan,
    schema_change_query,
    send_schema_change,
    write_batches,
)

try:  # PySpark 4.1+
    from pyspark.sql.datasource import DataSourceStreamArrowWriter
except ImportError:  # PySpark 4.0: Row-based stream writer, same write loop
    DataSourceStreamArrowWriter = None

__all__ = ["StreamCheckpoint", "TiCDCCommitMessage", "TiCDCDataSource"]

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


# Local properties Spark sets on every task of a micro-batch (MicroBatchExecution,
# StreamExecution); SQL confs set in the session arrive the same way
# (SQLExecution.withSQLConfPropagated), among them SESSION_ROOT_CONF.
_BATCH_ID_PROPERTY = "streaming.sql.batchId"
_QUERY_ID_PROPERTY = "sql.streaming.queryId"


class TiCDCCommitMessage(WriterCommitMessage):
    """A task's report, carried from the executor to the driver's commit step, with the
    checkpoint location and commit ts its task found when only tasks can find them."""

    def __init__(
        self,
        report: TaskReport,
        *,
        checkpoint_location: str | None = None,
        commit_ts: int | None = None,
    ) -> None:
        self.report = report
        self.checkpoint_location = checkpoint_location
        self.commit_ts = commit_ts

    def __repr__(self) -> str:
        return f"TiCDCCommitMessage({self.report!r})"


@attrs.frozen
class StreamCheckpoint:
    """How a stream writer's tasks find and check the query's checkpoint.

    `location` is the `checkpointLocation` option; without it the tasks use Spark's
    `<spark.sql.streaming.checkpointLocation>/<query_name>`. `query_id` is the query's id
    in `<location>/metadata`, read by the driver, which every task compares with the query
    it runs in: a location read differently from Spark's (another file system) fails.
    """

    location: str | None
    query_name: str | None = None
    query_id: str | None = None


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
        _warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout().reserved)
        commit_ts = tso.now()
        floor = None
        state = None
        if config.checkpoint_location:
            state = SinkState(config.checkpoint_location)
            state.check_writable()
            floor = state.watermark_floor(None)
            commit_ts = max(commit_ts, (floor or 0) + 1)
        plan = make_plan(
            config,
            schema,
            commit_ts,
            batch_id=None,
            watermark_floor=floor,
            arrow_schema=_filter_schema(config, schema),
        )
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
            query_name = self.options.get("queryname")
            if not query_name:
                raise ConfigError(
                    "streaming writes need option 'checkpointLocation', or a query named "
                    "with queryName(...) when the checkpoint comes from the session conf "
                    f"{SESSION_ROOT_CONF} (Spark gives an unnamed query a new random folder "
                    "there on every start, so it could never restart from it)",
                    option="checkpointLocation",
                )
            _warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout().reserved)
            # Planned without the checkpoint: the tasks find it and fix the commit ts and
            # the watermark floor (`_WriterMixin._locate`); the one here only compiles the
            # encoders.
            plan = make_plan(
                config,
                schema,
                tso.now(),
                batch_id=None,
                arrow_schema=_filter_schema(config, schema),
            )
            checkpoint = StreamCheckpoint(None, query_name=query_name)
        else:
            _warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout().reserved)
            state = SinkState(config.checkpoint_location)
            state.check_writable()
            batch_id = state.current_batch_id()
            checkpoint = StreamCheckpoint(config.checkpoint_location, query_id=state.query_id())
            floor = state.watermark_floor(batch_id)  # before commit_ts_for_batch marks it planned
            commit_ts = state.commit_ts_for_batch(batch_id)
            plan = make_plan(
                config,
                schema,
                commit_ts,
                batch_id=batch_id,
                watermark_floor=floor,
                arrow_schema=_filter_schema(config, schema),
            )
            _announce_schema(plan, state)
        if DataSourceStreamArrowWriter is None:
            return TiCDCStreamRowWriter(plan, schema, checkpoint)
        return TiCDCStreamWriter(plan, checkpoint)


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


def _warn_if_kafka_shaped(names: tuple[str, ...], metadata: frozenset[str]) -> None:
    """A frame of Kafka records (built for Spark's Kafka sink, or read by its Kafka
    source) is written here as a table whose columns are named key, value, ...: say so,
    once per process and frame shape (Spark asks for a stream writer twice per
    micro-batch, in a reused worker)."""
    reserved = {name.lower() for name in metadata}
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
    if table is None or not plan.config.codec.spec.ddl:
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
    checkpoint: StreamCheckpoint | None = None  # stream writers only

    def _write(self, batches: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        plan, found = self.plan, None
        if self.checkpoint is not None and context is not None:
            plan, found = self._locate(context)
        producer_factory: Callable[..., Any] = KafkaProducer
        fail_after = os.environ.get(_FAIL_FIRST_ATTEMPT_ENV)
        if fail_after and context is not None and context.attemptNumber() == 0:
            producer_factory = functools.partial(_FirstAttemptFails, fail_after=int(fail_after))
        report = write_batches(
            batches, plan, partition_id=partition_id, producer_factory=producer_factory
        )
        if found is None:
            return TiCDCCommitMessage(report)
        return TiCDCCommitMessage(report, checkpoint_location=found, commit_ts=plan.commit_ts)

    def _locate(self, context: TaskContext) -> tuple[WritePlan, str | None]:
        """A stream task's plan, checked against the query it runs in; when the driver
        could not see the checkpoint, completed here, with the location it found.

        Raises:
            ConfigError: the checkpoint the sink reads is not the query's.
        """
        checkpoint = self.checkpoint
        assert checkpoint is not None
        task_batch = context.getLocalProperty(_BATCH_ID_PROPERTY)
        if task_batch is None:  # not a micro-batch (Spark runs every stream write in one)
            return self.plan, None
        batch_id = int(task_batch)
        query_id = context.getLocalProperty(_QUERY_ID_PROPERTY)
        if checkpoint.location is not None:
            _check_same_query(checkpoint.location, checkpoint.query_id, query_id)
            if batch_id != self.plan.batch_id:
                raise ConfigError(
                    f"the offset log under checkpointLocation {checkpoint.location!r} says "
                    f"micro-batch {self.plan.batch_id}, but the query runs micro-batch "
                    f"{batch_id}: the sink reads another folder than Spark writes; give the "
                    "location as a full URI (hdfs://, s3a://, file:)",
                    option="checkpointLocation",
                    value=checkpoint.location,
                )
            return self.plan, None
        root = context.getLocalProperty(SESSION_ROOT_CONF)
        if not root or not checkpoint.query_name:
            raise ConfigError(
                f"streaming writes need option 'checkpointLocation' (or {SESSION_ROOT_CONF} "
                "and a queryName)",
                option="checkpointLocation",
            )
        location = session_location(root, checkpoint.query_name)
        state = SinkState(location)
        _check_same_query(location, state.query_id(), query_id)
        floor = state.watermark_floor(batch_id)  # before commit_ts_for_batch marks it planned
        commit_ts = state.commit_ts_for_batch(batch_id)
        plan = attrs.evolve(
            self.plan,
            commit_ts=commit_ts,
            build_ts_ms=tso.physical_ms(commit_ts),
            batch_id=batch_id,
            watermark_floor=floor,
        )
        _refuse_pending_ddl(plan, state, location)
        return plan, location

    def _resolve(self, messages: list[Any], batch_id: int | None) -> None:
        """Commit step of a query whose tasks found the checkpoint: take the location and
        the commit ts from their messages (no task ran: nothing was written, no state)."""
        if self.checkpoint is None or self.checkpoint.location is not None:
            return
        found = next((m for m in messages if m is not None and m.checkpoint_location), None)
        if found is None:
            return
        # The commit runner builds a fresh writer for each commit, so this one is its own.
        self.plan = attrs.evolve(
            self.plan,
            config=attrs.evolve(self.plan.config, checkpoint_location=found.checkpoint_location),
            commit_ts=found.commit_ts,
            build_ts_ms=tso.physical_ms(found.commit_ts),
            batch_id=batch_id,
        )

    def _commit(self, messages: list[Any], batch_id: int | None = None) -> None:
        _log_to_stderr()
        self._resolve(messages, batch_id)
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


def _check_same_query(location: str, checkpoint_query: str | None, task_query: str | None) -> None:
    if task_query is not None and checkpoint_query != task_query:
        found = f"query {checkpoint_query}" if checkpoint_query else "no Spark checkpoint"
        raise ConfigError(
            f"checkpointLocation {location!r} holds {found}, but the query running is "
            f"{task_query}: the sink reads another folder than Spark checkpoints to; give "
            "the location as a full URI (hdfs://, s3a://, file:) when Spark's default file "
            "system is not the local one",
            option="checkpointLocation",
            value=location,
        )


def _refuse_pending_ddl(plan: WritePlan, state: SinkState, location: str) -> None:
    """A task that found the checkpoint itself cannot send a DDL message ahead of every
    other task's rows; the driver does that when it sees the checkpoint (the option)."""
    table = plan.tables.named_table
    if table is None or plan.batch_id is None or state.ddl_sent_for_batch(plan.batch_id):
        return
    stored = state.last_table_schema(table.database, table.table)
    query = schema_change_query(plan, table_schema_from_json(stored) if stored else None)
    if query is not None:
        raise ConfigError(
            f"table {table.database}.{table.table} needs a DDL message before this "
            f"micro-batch ({query}), which the sink sends from the driver, and the driver "
            f"sees the checkpoint only as an option: set option checkpointLocation to "
            f"{location!r} (what Spark made of {SESSION_ROOT_CONF} and queryName)",
            option="checkpointLocation",
            value=location,
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
        def __init__(self, plan: WritePlan, checkpoint: StreamCheckpoint) -> None:
            self.plan = plan
            self.checkpoint = checkpoint

        def write(self, iterator: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
            return self._write(iterator)

        def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
            self._commit(messages, batchId)

        def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
            self._abort(messages)


class TiCDCStreamRowWriter(_WriterMixin, DataSourceStreamWriter):
    """PySpark 4.0 has no Arrow stream writer: turn Rows back into record batches and run
    the same loop. Spark hands naive datetimes in the executor's local zone here, so
    TIMESTAMP values are made aware before Arrow sees them."""

    _CHUNK = 10_000

    def __init__(self, plan: WritePlan, schema: StructType, checkpoint: StreamCheckpoint) -> None:
        self.plan = plan
        self.schema = schema
        self.checkpoint = checkpoint

    def write(self, iterator: Iterator[Any]) -> TiCDCCommitMessage:
        return self._write(_rows_to_batches(iterator, self.schema, self._CHUNK))

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        self._commit(messages, batchId)

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


def _filter_schema(config: SinkConfig, schema: StructType) -> pa.Schema | None:
    """The record batches' Arrow schema when event filters need it checked on the driver."""
    return _arrow_schema(schema) if config.row_filter().active else None


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
