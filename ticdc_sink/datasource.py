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
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pyarrow as pa
import pyspark
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
    TimestampType,
)

from ticdc_sink import tso
from ticdc_sink.checkpoint import SESSION_ROOT_CONF, session_location
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.kafka_settings import check_client_config
from ticdc_sink.producer import KafkaProducer, ProducerFactory
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import (
    ReadPlan,
    plan_read,
    plan_stream_start,
    plan_tasks,
    stream_config,
)
from ticdc_sink.read.rows import arrow_schema, fit_batch
from ticdc_sink.read.scan import read_parts
from ticdc_sink.read.split import Task
from ticdc_sink.read.stream import (
    StreamOffset,
    StreamScan,
    TriggerDelay,
    check_consistency,
    describe_cut,
    refuse_changes,
)
from ticdc_sink.schema import TableSchema, table_schema_from_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer import (
    TaskReport,
    WritePlan,
    commit_batch,
    make_plan,
    rules,
    schema_change_query,
    send_schema_change,
    write_batches,
)

try:  # PySpark 4.1+
    from pyspark.sql.datasource import DataSourceStreamArrowWriter
except ImportError:  # PySpark 4.0: Row-based stream writer, same write loop
    # (the type checker reads the newest PySpark, where the class exists)
    DataSourceStreamArrowWriter = None  # type: ignore[assignment,misc]

try:  # PySpark 4.2+: read limits (maxOffsetsPerTrigger) and Trigger.AvailableNow
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        ReadMinRows,
        SupportsTriggerAvailableNow,
    )

    _STREAM_READER_BASES: tuple[type, ...] = (DataSourceStreamReader, SupportsTriggerAvailableNow)
except ImportError:  # PySpark 4.0, 4.1: latestOffset() takes no start and no limit
    ReadAllAvailable = ReadMaxRows = ReadMinRows = None  # type: ignore[assignment,misc]
    _STREAM_READER_BASES = (DataSourceStreamReader,)

# The options that need PySpark 4.2's read limits: a cap or a wait the reader applied
# itself would end Trigger.AvailableNow (which asks for the latest offset once) early.
_READ_LIMIT_OPTIONS: dict[str, Callable[[ReadConfig], object]] = {
    "maxOffsetsPerTrigger": lambda c: c.max_offsets_per_trigger,
    "minOffsetsPerTrigger": lambda c: c.min_offsets_per_trigger,
    "maxTriggerDelay": lambda c: c.max_trigger_delay_s if c.max_trigger_delay_given else None,
}

__all__ = [
    "StreamCheckpoint",
    "TiCDCCommitMessage",
    "TiCDCDataSource",
    "TiCDCRangePartition",
    "TiCDCReader",
    "TiCDCStreamPartition",
    "TiCDCStreamReader",
    "read_spark_schema",
]

logger = logging.getLogger(__name__)

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
    """Writes DataFrame rows to Kafka as TiCDC row-change events, and reads TiCDC topics
    back into change rows.

    Name: `ticdc`. Options: docs/reference/write-options.md and read-options.md
    (`ticdc_sink.config`, `ticdc_sink.read.options`).
    """

    @classmethod
    def name(cls) -> str:
        return "ticdc"

    def schema(self) -> StructType:
        # Spark asks for the schema of a read without a user schema, then pickles this
        # instance to the planner that calls reader(): the plan made here travels along,
        # so the topic is scanned once and the ranges read are the ones the schema saw.
        plan = self._read_plan = plan_read(_read_config(self.options))
        config = plan.config
        return read_spark_schema(
            arrow_schema(
                plan.table, kafka_columns=config.kafka_columns, headers=config.include_headers
            )
        )

    def reader(self, schema: StructType) -> TiCDCReader:
        plan: ReadPlan | None = getattr(self, "_read_plan", None)
        if plan is None:  # a user schema: schema() was not called
            plan = plan_read(_read_config(self.options))
            return TiCDCReader(plan, _arrow_schema(schema))
        return TiCDCReader(plan, None)

    def streamReader(self, schema: StructType) -> TiCDCStreamReader:
        # As reader(): the plan schema() made travels along, else (a user schema) one here.
        plan: ReadPlan | None = getattr(self, "_read_plan", None)
        user_schema = None
        if plan is None:
            plan = plan_read(stream_config(_read_config(self.options)))
            user_schema = _arrow_schema(schema)
        plan = plan_stream_start(plan)
        check_consistency(plan.config)
        for option, value in _READ_LIMIT_OPTIONS.items():
            given = value(plan.config)
            if ReadMaxRows is None and given is not None:
                raise ConfigError(
                    f"option '{option}' needs PySpark 4.2 or later, which gives Python "
                    f"stream sources read limits (this is {pyspark.__version__}); remove it, "
                    "or upgrade PySpark",
                    option=option,
                    value=str(given),
                )
        return TiCDCStreamReader(plan, user_schema)

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
    if config.codec.output_raw_change_event and not config.codec.sends_old_values:
        spec = config.codec.spec
        _warn_raw_change_events_without_old_values(spec.name, spec.old_values_option)
    return config


@functools.cache
def _warn_raw_change_events_without_old_values(protocol: str, option: str | None) -> None:
    # Once per process and protocol. TiCDC logs the same warning when a changefeed is
    # created (tiflow pkg/config/sink.go, SinkConfig.ValidateProtocol).
    send_old_values = f"Send old values ({option}=true), or leave" if option else "Leave"
    logger.warning(
        "ticdc: output-raw-change-event=true with protocol %s, whose UPDATEs carry no old "
        "values: an UPDATE that changes the key is sent whole, and consumers never learn "
        "that the old key is gone. %s output-raw-change-event false to send such UPDATEs as "
        "DELETE and INSERT",
        protocol,
        send_old_values,
    )


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
            "table columns. Select the table's columns instead "
            "(docs/guides/writing.md, 'The input contract')",
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


def _read_config(options: Any) -> ReadConfig:
    config = ReadConfig.from_options(dict(options))
    if config.ignored:
        _log_to_stderr()
        _warn_ignored_by_reads(config.ignored)
    return config


@functools.cache
def _warn_ignored_by_reads(ignored: tuple[str, ...]) -> None:
    # Once per process: one option map may serve a write and a read (Spark asks for the
    # schema and the reader apart).
    logger.warning(
        "ticdc: ignored options that only a write takes (they mean nothing to a read): %s",
        ", ".join(ignored),
    )


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
    if table is None or not plan.config.codec.sends_ddl:
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
    # How the tasks and the commit step make their producers; the reliability tests set
    # one that fails on purpose (tests/support/faults.py).
    producer_factory: ProducerFactory = KafkaProducer

    def _write(self, batches: Iterator[pa.RecordBatch]) -> TiCDCCommitMessage:
        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        plan, found = self.plan, None
        if self.checkpoint is not None and context is not None:
            plan, found = self._locate(context)
        report = write_batches(
            batches, plan, partition_id=partition_id, producer_factory=self.producer_factory
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
        commit_batch(
            self.plan,
            [m.report if m is not None else None for m in messages],
            state=state,
            producer_factory=self.producer_factory,
        )

    def _abort(self, messages: list[Any]) -> None:
        _log_to_stderr()
        done = [m for m in messages if m is not None]
        logger.warning(
            "ticdc write aborted: %d of %d tasks reported success; messages already sent "
            "stay in Kafka (at-least-once) and no watermark was sent for this batch",
            len(done),
            len(messages),
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


class TiCDCRangePartition(InputPartition):
    """One Spark partition of a batch read: the offset ranges its task reads one after the
    other (a Kafka partition's range, a part of one with minPartitions, or several small
    ones packed: `read.split`), each with its partition's resolved ts before it (for the
    replay rule), and the table schemas the driver knows."""

    def __init__(self, parts: Task, known: tuple[TableSchema, ...] = ()) -> None:
        super().__init__(parts)
        self.parts = parts
        self.known = known


class TiCDCReader(DataSourceReader):
    """A batch read: one task per Kafka partition range, or part of one (`minPartitions`),
    or several small ones (`offsets-per-task`): `read.split`; Arrow record batches out.
    `user_schema` is the Arrow form of a schema given with `.schema(...)` (None: the
    discovered one)."""

    def __init__(self, plan: ReadPlan, user_schema: pa.Schema | None) -> None:
        self.plan = plan
        self.user_schema = user_schema

    def partitions(self) -> list[TiCDCRangePartition]:
        tasks, known = plan_tasks(self.plan)
        return [TiCDCRangePartition(task, known) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TiCDCRangePartition)
        _log_to_stderr()  # the count of replayed rows dropped
        plan = self.plan
        # TiCDC's replay rule from each range's start, as a stream from the same offsets;
        # a part of a range starts with the resolved ts before it.
        known = partition.known or plan.known
        for batch in read_parts(plan.config, plan.table, known, partition.parts):
            yield batch if self.user_schema is None else fit_batch(batch, self.user_schema)


class TiCDCStreamPartition(InputPartition):
    """One Spark partition of a micro-batch: the offset ranges its task reads one after
    the other (`read.split`), each with its partition's resolved ts before it (for the
    replay rule), and the table schemas the driver knows; under `driver-scan=watermarks`
    the micro-batch's start, which a task that meets a schema change names."""

    def __init__(
        self, parts: Task, known: tuple[TableSchema, ...], start: dict[str, Any] | None = None
    ) -> None:
        super().__init__(parts)
        self.parts = parts
        self.known = known
        self.start = start


class TiCDCStreamReader(*_STREAM_READER_BASES):  # type: ignore[misc]
    """A streaming read (`read.stream`): the driver scans the topic and cuts micro-batches
    at watermarks; one task per Kafka partition with data, Arrow record batches out.

    Spark keeps this object on the driver for the whole query and calls it from one
    thread; the scan (and its consumer) is made on first use, never pickled: the tasks get
    a fresh copy from `DataSource.streamReader`.
    """

    def __init__(self, plan: ReadPlan, user_schema: pa.Schema | None) -> None:
        self.plan = plan
        self.user_schema = user_schema
        self._scan: StreamScan | None = None
        self._target: dict[tuple[str, int], int] | None = None  # Trigger.AvailableNow's end
        minimum = plan.config.min_offsets_per_trigger
        self._wait = (
            None if minimum is None else TriggerDelay(minimum, plan.config.max_trigger_delay_s)
        )
        # Where the next micro-batch starts, for PySpark < 4.2, whose latestOffset gets no
        # start: the initial offset, then each batch's end. After a restart Spark names
        # the checkpoint's last end through `partitions` (an empty range, and the range of
        # a batch it runs again) before it asks for the next end; not to a
        # Trigger.AvailableNow run (docs/guides/reading-streams.md).
        self._last: StreamOffset | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"plan": self.plan, "user_schema": self.user_schema}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["plan"], state["user_schema"])  # type: ignore[misc]

    def _scanner(self) -> StreamScan:
        if self._scan is None:
            plan = self.plan
            log = TopicLog(plan.config)
            self._scan = StreamScan(plan.config, plan.table, plan.known, log)
        return self._scan

    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 (Spark's name)
        self._last = self._scanner().initial_offset()
        return self._last.to_json()

    def getDefaultReadLimit(self) -> Any:  # noqa: N802
        # Python sources have no composite limit: with both, Spark hands back the cap and
        # latestOffset applies the wait itself; ReadAllAvailable (Trigger.Once) drops both.
        config = self.plan.config
        if config.max_offsets_per_trigger is not None:
            return ReadMaxRows(config.max_offsets_per_trigger)
        if config.min_offsets_per_trigger is not None:
            return ReadMinRows(config.min_offsets_per_trigger)
        return ReadAllAvailable()

    def reportLatestOffset(self) -> dict[str, Any] | None:  # noqa: N802
        # As Spark's Kafka source: the partitions' ends when the last batch was planned.
        latest = self._scan.latest if self._scan is not None else {}
        if not latest:
            return None
        return StreamOffset(latest, {}).kafka_json()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self._target = {key: high for key, (_, high) in self._scanner().bounds().items()}

    def latestOffset(  # noqa: N802
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        scan = self._scanner()
        if start is not None:
            begin = StreamOffset.from_json(start)
        else:
            begin = self._last or scan.initial_offset()
        # PySpark 4.0/4.1 pass no limit (and the options are refused there, streamReader).
        cap = limit.max_rows if ReadMaxRows is not None and isinstance(limit, ReadMaxRows) else None
        everything = ReadAllAvailable is not None and isinstance(limit, ReadAllAvailable)
        # Trigger.AvailableNow reads what there is and ends: it never waits for more.
        wait = None if everything or self._target is not None else self._wait
        cut = scan.next_cut(begin, self._target, cap, wait)
        if cut.end != begin:
            _log_to_stderr()
            logger.info(
                "ticdc: micro-batch of %s planned up to %s: resolved ts %s, %s",
                self.plan.config.named_topics,
                cut.end.kafka_json(),
                cut.resolved_ts if cut.resolved_ts is not None else "(none)",
                describe_cut(cut, begin, keep_replays=self.plan.config.keep_replays),
            )
        self._last = cut.end
        return cut.end.to_json()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[TiCDCStreamPartition]:
        begin = StreamOffset.from_json(start)
        finish = StreamOffset.from_json(end)
        self._last = finish
        scan = self._scanner()
        scan.cover(begin, finish)
        known = scan.tables
        at = begin.kafka_json() if self.plan.config.tail_scan else None
        return [TiCDCStreamPartition(task, known, at) for task in scan.tasks(begin, finish)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TiCDCStreamPartition)
        plan = self.plan
        start = partition.start
        changes = None if start is None else refuse_changes(plan.table, start)
        parts = partition.parts
        for batch in read_parts(plan.config, plan.table, partition.known, parts, changes=changes):
            yield batch if self.user_schema is None else fit_batch(batch, self.user_schema)

    def commit(self, end: dict[str, Any]) -> None:
        if self._scan is not None:
            self._scan.forget_before(StreamOffset.from_json(end))

    def stop(self) -> None:
        if self._scan is not None:
            self._scan.close()
            self._scan = None


def read_spark_schema(schema: pa.Schema) -> StructType:
    """The Spark form of a read's Arrow schema (`read.rows.arrow_schema`), field metadata
    (`mysql_type`, `ticdc_table`) kept: the schema a write of the read's DataFrame sees."""
    return StructType([_spark_field(field) for field in schema])


def _spark_field(field: pa.Field) -> StructField:
    metadata = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    if pa.types.is_struct(field.type):
        data_type: DataType = StructType([_spark_field(f) for f in field.type])
    else:
        data_type = from_arrow_type(field.type)
    return StructField(field.name, data_type, field.nullable, metadata or None)


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
    return _arrow_schema(schema) if rules.row_filter(config).active else None


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
