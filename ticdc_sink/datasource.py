"""The Spark-facing classes: `format("ticdc")`. Thin by design: the DataSource, its
readers and writers and their Spark methods, which read what Spark hands over (options,
schemas, task contexts, commit messages) and pass it to the writer (`ticdc_sink.writer`)
and the read side (`ticdc_sink.read`), where the work is.

Spark builds these on the driver (options -> SinkConfig, validated before any task runs),
pickles the writer to every task, and calls `commit` on the driver once every task of the
batch succeeded. Clients (producers) are made inside `write()` and `commit()` only.

A streaming query's checkpoint: a query that names no `checkpointLocation` gets
`<spark.sql.streaming.checkpointLocation>/<queryName>` from Spark, and that session conf
reaches no Python code on the driver, only the tasks (Spark hands SQL confs to tasks as
local properties): the tasks find it (`writer.checkpointing`) and tell the commit step
where it is through their commit messages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

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
from pyspark.sql.types import StructType

from ticdc_sink.checkpoint import SESSION_ROOT_CONF
from ticdc_sink.codec.config import warn_raw_change_events_without_old_values
from ticdc_sink.config import SinkConfig
from ticdc_sink.config.sink import warn_ignored_settings
from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import warn_if_kafka_shaped
from ticdc_sink.kafka_settings import check_client_config, warn_client_setting
from ticdc_sink.producer import KafkaProducer, ProducerFactory
from ticdc_sink.read.micro_batches import MicroBatches
from ticdc_sink.read.options import ReadConfig, read_limits, warn_ignored_by_reads
from ticdc_sink.read.plan import ReadPlan, plan_read, plan_stream_start, plan_tasks, stream_config
from ticdc_sink.read.rows import arrow_schema, fit_batch
from ticdc_sink.read.scan import read_parts
from ticdc_sink.read.split import Task
from ticdc_sink.read.stream import StreamOffset, check_consistency, refuse_changes
from ticdc_sink.schema import TableSchema
from ticdc_sink.spark_arrow import read_spark_schema, rows_to_batches, spark_arrow_schema
from ticdc_sink.state import SinkState
from ticdc_sink.writer import TaskReport, WritePlan, abort_batch, commit_batch, rules, write_batches
from ticdc_sink.writer.checkpointing import (
    StreamCheckpoint,
    commit_plan,
    plan_batch_write,
    plan_micro_batch,
    task_plan,
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

__all__ = [
    "TiCDCCommitMessage",
    "TiCDCDataSource",
    "TiCDCRangePartition",
    "TiCDCReader",
    "TiCDCStreamPartition",
    "TiCDCStreamReader",
]


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
            return TiCDCReader(plan, spark_arrow_schema(schema))
        return TiCDCReader(plan, None)

    def streamReader(self, schema: StructType) -> TiCDCStreamReader:
        # As reader(): the plan schema() made travels along, else (a user schema) one here.
        plan: ReadPlan | None = getattr(self, "_read_plan", None)
        user_schema = None
        if plan is None:
            plan = plan_read(stream_config(_read_config(self.options)))
            user_schema = spark_arrow_schema(schema)
        plan = plan_stream_start(plan)
        check_consistency(plan.config)
        limits = read_limits(plan.config)
        if ReadMaxRows is None and limits:
            option, given = next(iter(limits.items()))
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
        warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout().reserved)
        return TiCDCBatchWriter(
            plan_batch_write(config, schema, arrow_schema=_filter_schema(config, schema))
        )

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
        query_name = None
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
        warn_if_kafka_shaped(tuple(schema.fieldNames()), config.input.layout().reserved)
        plan, checkpoint = plan_micro_batch(
            config, schema, query_name=query_name, arrow_schema=_filter_schema(config, schema)
        )
        if DataSourceStreamArrowWriter is None:
            return TiCDCStreamRowWriter(plan, schema, checkpoint)
        return TiCDCStreamWriter(plan, checkpoint)


def _config(options: Any) -> SinkConfig:
    config = SinkConfig.from_options(dict(options))
    if config.ignored:
        warn_ignored_settings(config.ignored)
    # librdkafka's verdict on the kafka.* settings, here rather than in every task.
    for warning in check_client_config(config.kafka):
        warn_client_setting(warning)
    if config.codec.output_raw_change_event and not config.codec.sends_old_values:
        spec = config.codec.spec
        warn_raw_change_events_without_old_values(spec.name, spec.old_values_option)
    return config


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


def _read_config(options: Any) -> ReadConfig:
    config = ReadConfig.from_options(dict(options))
    if config.ignored:
        _log_to_stderr()
        warn_ignored_by_reads(config.ignored)
    return config


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
        """A stream task's plan and the checkpoint location it found (`task_plan`)."""
        assert self.checkpoint is not None
        return task_plan(
            self.plan,
            self.checkpoint,
            batch=context.getLocalProperty(_BATCH_ID_PROPERTY),
            query_id=context.getLocalProperty(_QUERY_ID_PROPERTY),
            root=context.getLocalProperty(SESSION_ROOT_CONF),
        )

    def _resolve(self, messages: list[Any], batch_id: int | None) -> None:
        """The commit step's plan, with what the tasks found (`commit_plan`). The commit
        runner builds a fresh writer for each commit, so this one is its own."""
        found = next(
            (
                (m.checkpoint_location, m.commit_ts)
                for m in messages
                if m is not None and m.checkpoint_location
            ),
            None,
        )
        self.plan = commit_plan(self.plan, self.checkpoint, found, batch_id)

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
        abort_batch([m.report if m is not None else None for m in messages])


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
    at watermarks (`read.micro_batches`); one task per Kafka partition with data, Arrow
    record batches out.

    Spark keeps this object on the driver for the whole query and calls it from one
    thread; the scan (and its consumer) is made on first use, never pickled: the tasks get
    a fresh copy from `DataSource.streamReader`.
    """

    def __init__(self, plan: ReadPlan, user_schema: pa.Schema | None) -> None:
        self.plan = plan
        self.user_schema = user_schema
        self._batches = MicroBatches(plan)

    def __getstate__(self) -> dict[str, Any]:
        return {"plan": self.plan, "user_schema": self.user_schema}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["plan"], state["user_schema"])  # type: ignore[misc]

    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 (Spark's name)
        return self._batches.initial_offset().to_json()

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
        return self._batches.reported_latest()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self._batches.prepare_available_now()

    def latestOffset(  # noqa: N802
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        _log_to_stderr()  # the line of a micro-batch planned
        # PySpark 4.0/4.1 pass no limit (and the options are refused there, streamReader).
        cap = limit.max_rows if ReadMaxRows is not None and isinstance(limit, ReadMaxRows) else None
        everything = ReadAllAvailable is not None and isinstance(limit, ReadAllAvailable)
        begin = None if start is None else StreamOffset.from_json(start)
        return self._batches.next_cut(begin, cap=cap, everything=everything).end.to_json()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[TiCDCStreamPartition]:
        begin, finish = StreamOffset.from_json(start), StreamOffset.from_json(end)
        tasks, known = self._batches.tasks(begin, finish)
        at = begin.kafka_json() if self.plan.config.tail_scan else None
        return [TiCDCStreamPartition(task, known, at) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TiCDCStreamPartition)
        plan = self.plan
        start = partition.start
        changes = None if start is None else refuse_changes(plan.table, start)
        parts = partition.parts
        for batch in read_parts(plan.config, plan.table, partition.known, parts, changes=changes):
            yield batch if self.user_schema is None else fit_batch(batch, self.user_schema)

    def commit(self, end: dict[str, Any]) -> None:
        self._batches.commit(StreamOffset.from_json(end))

    def stop(self) -> None:
        self._batches.stop()


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
        return self._write(rows_to_batches(iterator, self.schema, self._CHUNK))

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        self._commit(messages, batchId)

    def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        self._abort(messages)


def _filter_schema(config: SinkConfig, schema: StructType) -> pa.Schema | None:
    """The record batches' Arrow schema when event filters need it checked on the driver."""
    return spark_arrow_schema(schema) if rules.row_filter(config).active else None
