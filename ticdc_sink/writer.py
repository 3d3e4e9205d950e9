"""The per-partition write loop shared by the batch and the streaming writer, and the
driver's commit step. Knows no Spark: it takes Arrow record batches and plain values, so
the whole loop runs in unit tests with a fake producer.

    record batches -> RowChange (events) -> key-changing UPDATE split (TiCDC's Kafka rule)
      -> encoder per table (codec) -> topic and partition (routing) -> producer
      -> flush, every delivery checked -> TaskReport (travels back in the commit message)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink import claim_check, codec, schema_change, tso
from ticdc_sink.config import (
    DDL_PROTOCOLS,
    CodecConfig,
    LargeMessageHandleOption,
    Protocol,
    SinkConfig,
)
from ticdc_sink.errors import ConfigError
from ticdc_sink.events import (
    ChangeBatch,
    InputLayout,
    RowChange,
    read_change_batches,
    split_key_update,
)
from ticdc_sink.order_check import CommitOrderCheck
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.routing import TopicRouter, build_dispatcher, rule_for
from ticdc_sink.schema import (
    TableSchema,
    build_table_schema,
    parse_table_ddl,
    stable_table_id,
)

__all__ = [
    "TablePlan",
    "TaskReport",
    "WritePlan",
    "batch_report",
    "emit_watermark",
    "key_column_indexes",
    "make_plan",
    "send_schema_change",
    "split_key_update",
    "table_topic",
    "write_batches",
]

logger = logging.getLogger(__name__)

ProducerFactory = Callable[..., Any]
RegistryFactory = Callable[..., Any]

# The fast path checks the bootstrap interval (send-bootstrap-interval-in-sec) at least
# every this many rows; the row path checks it before every row.
_BOOTSTRAP_CLOCK_ROWS = 1024

# TiCDC keeps this much below a topic's max.message.bytes (tiflow pkg/sink/kafka/options.go,
# maxMessageBytesOverhead).
_TOPIC_LIMIT_MARGIN = 128


@attrs.frozen
class TablePlan:
    """How to build a table's schema on an executor: the DataFrame's table columns as a
    template, renamed per `_database` / `_table` value. Built and validated on the
    driver, so a bad type fails before any task runs."""

    template: TableSchema
    fixed_table_id: int | None = None
    default_database: str | None = None
    default_table: str | None = None

    @property
    def named_table(self) -> TableSchema | None:
        """The table when options name it; None when rows name their tables."""
        if self.default_database and self.default_table:
            return self.template
        return None

    def schema_for(self, database: str, table: str) -> TableSchema:
        if (database, table) == (self.template.database, self.template.table):
            return self.template
        table_id = self.fixed_table_id or stable_table_id(database, table)
        return attrs.evolve(self.template, database=database, table=table, table_id=table_id)


@attrs.frozen
class WritePlan:
    """Everything a task needs, pickled once on the driver and identical for every
    attempt of every task of one batch (this is what makes replays byte-identical)."""

    config: SinkConfig
    tables: TablePlan
    commit_ts: int
    build_ts_ms: int
    batch_id: int | None = None
    planned_at: float = 0.0  # wall clock (time.time()) when planned, for batch reports


@attrs.frozen
class TaskReport:
    """What one task tells the driver: where it wrote and how much; `diverted` counts the
    messages sent in place of one above max-message-bytes (handle-key-only, claim-check)."""

    partition_id: int
    topics: dict[str, int]
    partitions: frozenset[tuple[str, int]]
    max_commit_ts: int
    rows: int
    messages: int
    bytes: int
    topic_messages: dict[str, int] = attrs.field(factory=dict)
    topic_bytes: dict[str, int] = attrs.field(factory=dict)
    diverted: int = 0


# Placeholder names for the table template when `_database` / `_table` columns name the
# tables row by row; each row's own names replace them on the executors.
_ROUTED = "_routed_by_column"


def make_plan(
    config: SinkConfig, schema: Any, commit_ts: int, *, batch_id: int | None
) -> WritePlan:
    """The plan of one batch, made on the driver from the DataFrame's Spark schema: the
    table template is built and an encoder compiled once here, so a bad type or an option
    the codec refuses fails before any task runs.

    Raises:
        SchemaError: the table schema cannot be derived.
        ConfigError: the codec refuses an option; partition-columns or index name what
            the table does not have.
    """
    inp = config.input
    build_ts_ms = tso.physical_ms(commit_ts)
    # Without a database or table option the names come from table-ddl, or row by row
    # from the `_database` / `_table` columns; the template then carries a placeholder.
    ddl = parse_table_ddl(inp.table_ddl) if inp.table_ddl else None
    fields = set(schema.fieldNames())
    database = inp.database or (ddl and ddl.database)
    table = inp.table or (ddl and ddl.table)
    template = build_table_schema(
        database or (_ROUTED if inp.database_column in fields else None),
        table or (_ROUTED if inp.table_column in fields else None),
        schema,
        reserved=InputLayout(**inp.layout_fields()).reserved,
        column_types=dict(inp.column_types),
        table_ddl=inp.table_ddl,
        primary_key=inp.primary_key,
        table_id=inp.table_id,
        version=inp.schema_version,
    )
    # Build the template's encoder once here, so an option the codec refuses (a protocol
    # or large-message option not implemented) fails on the driver, before any task.
    codec.build_encoder(config.codec, template, build_ts_ms=build_ts_ms)
    if config.codec.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK:
        # Fails here, before any task, when the storage cannot be opened.
        claim_check.open_store(config.codec.claim_check_storage_uri or "")
    if database and table:
        # The same for the dispatcher: partition-columns or an index the table lacks is an
        # option error, raised here rather than in every task (rows naming their own
        # tables share these columns, but the message would name the placeholder).
        dispatcher_for(config, template)
    if config.codec.ddl_on_first_batch and not (database and table):
        raise ConfigError(
            "option 'ddl-on-first-batch' needs the table named by the options 'database' "
            "and 'table' (or 'table-ddl'); rows naming their own tables have no first batch "
            "the driver can see",
            option="ddl-on-first-batch",
        )
    return WritePlan(
        config=config,
        tables=TablePlan(
            template,
            fixed_table_id=inp.table_id,
            default_database=database or None,
            default_table=table or None,
        ),
        commit_ts=commit_ts,
        build_ts_ms=build_ts_ms,
        batch_id=batch_id,
        planned_at=time.time(),
    )


def dispatcher_for(config: SinkConfig, table: TableSchema) -> Any:
    """The table's partition dispatcher: the first matching `dispatchers` rule's, else
    the `partition` option's.

    Raises:
        ConfigError: partition columns or an index the table lacks.
    """
    routing = config.routing
    rule = rule_for(routing.dispatchers, table.database, table.table)
    if rule is None:
        return build_dispatcher(
            routing.partition, table, columns=routing.partition_columns, index=routing.index
        )
    return build_dispatcher(rule.partition, table, columns=rule.columns, index=rule.index)


def key_column_indexes(schema: TableSchema) -> tuple[int, ...]:
    """Positions of the columns TiCDC flags as unique key or handle key."""
    handle = set(schema.handle_key)
    return tuple(
        i for i, c in enumerate(schema.columns) if c.name in handle or schema.is_unique_key(c.name)
    )


class _TableOutput:
    """One table's encoder, topic, dispatcher and bootstrap schedule inside one task."""

    def __init__(
        self,
        plan: WritePlan,
        schema: TableSchema,
        topic: str,
        registry: codec.SchemaRegistry | None,
        codec_config: CodecConfig | None = None,
        store: codec.ClaimCheckStore | None = None,
    ) -> None:
        self.schema = schema
        self.topic = topic
        # The codec options for this topic: max-message-bytes may be the topic's, lower.
        self.codec = codec_config or plan.config.codec
        self.encoder = codec.build_encoder(
            self.codec,
            schema,
            build_ts_ms=plan.build_ts_ms,
            topic=topic,
            registry=registry,
            claim_check=store,
        )
        self.dispatcher = dispatcher_for(plan.config, schema)
        self.key_indexes = key_column_indexes(schema)
        self.rows_since_bootstrap = 0
        self.last_bootstrap = float("-inf")


class _TaskWriter:
    def __init__(
        self,
        plan: WritePlan,
        producer: Any,
        partition_id: int,
        registry: codec.SchemaRegistry | None = None,
    ) -> None:
        self.plan = plan
        self.producer = producer
        self.registry = registry
        self.partition_id = partition_id
        self.schemas: dict[tuple[str, str], TableSchema] = {}
        self.outputs: dict[tuple[str, str], _TableOutput] = {}
        self.partition_counts: dict[str, int] = {}
        self.order = CommitOrderCheck()
        self.rows = 0
        self.diverted = 0
        self.max_commit_ts = 0
        codec_config = plan.config.codec
        self.store: codec.ClaimCheckStore | None = None
        if codec_config.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK:
            self.store = claim_check.open_store(codec_config.claim_check_storage_uri or "")
        self.codecs: dict[str, CodecConfig] = {}
        self.bootstrap_on = (
            codec_config.protocol == "simple"
            and codec_config.send_bootstrap_interval_in_sec > 0
            and codec_config.send_bootstrap_in_msg_count > 0
        )

    def schema_for(self, database: str, table: str) -> TableSchema:
        """One TableSchema object per table for the whole task (encoders key on it)."""
        schema = self.schemas.get((database, table))
        if schema is None:
            schema = self.schemas[(database, table)] = self.plan.tables.schema_for(database, table)
        return schema

    def output_for(self, schema: TableSchema) -> _TableOutput:
        key = (schema.database, schema.table)
        out = self.outputs.get(key)
        if out is None:
            topic = table_topic(self.plan.config, schema.database, schema.table)
            out = self.outputs[key] = _TableOutput(
                self.plan, schema, topic, self.registry, self.codec_for(topic), self.store
            )
        return out

    def codec_for(self, topic: str) -> CodecConfig:
        """The codec options for `topic`: max-message-bytes lowered to the topic's
        `max.message.bytes` - 128 where the brokers report it, as TiCDC does at start."""
        config = self.codecs.get(topic)
        if config is None:
            config = self.plan.config.codec
            # Producers that cannot describe topics (test fakes) keep the option's value;
            # debezium has no encoder-side size check (tiflow), so it need not ask.
            describe = getattr(self.producer, "topic_max_message_bytes", None)
            if describe is not None and config.protocol is not Protocol.DEBEZIUM:
                self.partition_count(topic)  # creates a missing topic first
                topic_limit = describe(topic)
                if topic_limit is not None:
                    limit = max(1, topic_limit - _TOPIC_LIMIT_MARGIN)
                    if limit < config.max_message_bytes:
                        # TiCDC warns when the topic's limit is not above the option.
                        log = (
                            logger.warning
                            if topic_limit <= config.max_message_bytes
                            else logger.debug
                        )
                        log(
                            "topic %s max.message.bytes is %d: max-message-bytes %d lowered to %d",
                            topic,
                            topic_limit,
                            config.max_message_bytes,
                            limit,
                        )
                        config = attrs.evolve(config, max_message_bytes=limit)
            self.codecs[topic] = config
        return config

    def partition_count(self, topic: str) -> int:
        n = self.partition_counts.get(topic)
        if n is None:
            n = self.partition_counts[topic] = self.producer.partition_count(topic)
        return n

    def send(self, topic: str, partition: int, message: codec.Message) -> None:
        self.producer.send(topic, partition, message.key, message.value)
        if message.diverted:
            self.diverted += 1

    def maybe_bootstrap(self, out: _TableOutput) -> None:
        """Simple protocol: a BOOTSTRAP before the table's first row in this task, then
        every `send-bootstrap-interval-in-sec` or `send-bootstrap-in-msg-count` rows."""
        if not self.bootstrap_on:
            return
        cfg = self.plan.config.codec
        now = time.monotonic()
        due = (
            out.last_bootstrap == float("-inf")
            or out.rows_since_bootstrap >= cfg.send_bootstrap_in_msg_count
            or now - out.last_bootstrap >= cfg.send_bootstrap_interval_in_sec
        )
        if not due:
            return
        message = out.encoder.encode_bootstrap()
        if message is not None:
            n = self.partition_count(out.topic)
            for partition in range(n) if cfg.send_bootstrap_to_all_partition else (0,):
                self.send(out.topic, partition, message)
        out.rows_since_bootstrap = 0
        out.last_bootstrap = now

    def check_order(self, change: RowChange) -> None:
        schema = change.table
        image = change.row if change.row is not None else change.before
        indexes = schema.handle_key_indexes
        if not indexes or image is None:
            return
        self.order.check_row(schema, tuple(image[i] for i in indexes), change.commit_ts)

    def write_change(self, change: RowChange, *, checked: bool = False) -> None:
        """One row's messages; `checked`: its commit-ts order was already checked."""
        if not checked:
            self.check_order(change)
        out = self.output_for(change.table)
        self.maybe_bootstrap(out)
        n = self.partition_count(out.topic)
        for event in split_key_update(change, out.key_indexes):
            partition = out.dispatcher.partition(event, n)
            self.send(out.topic, partition, out.encoder.encode_row(event))
        out.rows_since_bootstrap += 1
        self.rows += 1
        self.max_commit_ts = max(self.max_commit_ts, change.commit_ts)

    def write_batch(self, batch: ChangeBatch) -> None:
        """All rows of one table's batch: the same messages, partitions, bootstraps and
        order checks as `write_change` per row, with the messages rendered column-wise
        (`encode_batch`) and the rest (values it left to the row path, messages above
        max-message-bytes) taken from `encode_row`, before anything is sent."""
        out = self.output_for(batch.table)
        self.check_order_batch(batch)
        encoded = out.encoder.encode_batch(batch, out.key_indexes)
        n = self.partition_count(out.topic)
        events: list[RowChange] | None = None
        from_rows = encoded.row_path_messages(out.codec.max_message_bytes)
        if from_rows:
            events = batch.to_events(out.key_indexes)
            for i in from_rows:
                message = out.encoder.encode_row(events[i])
                encoded.replace(i, message)
                if message.diverted:
                    self.diverted += 1
        values = encoded.values
        keys = encoded.keys
        row_ends = encoded.row_ends
        constant = out.dispatcher.constant_partition(n)
        partitions: list[int] | None = None
        if constant is None:
            if events is None:
                events = batch.to_events(out.key_indexes)
            partition = out.dispatcher.partition
            partitions = [partition(event, n) for event in events]
        rows = batch.rows
        topic = out.topic
        start = 0
        while start < rows:
            stop = rows
            if self.bootstrap_on:
                self.maybe_bootstrap(out)
                due = self.plan.config.codec.send_bootstrap_in_msg_count - out.rows_since_bootstrap
                stop = min(rows, start + max(due, 1), start + _BOOTSTRAP_CLOCK_ROWS)
            first = start if row_ends is None else (row_ends[start - 1] if start else 0)
            last = stop if row_ends is None else row_ends[stop - 1]
            self._send_run(topic, constant, partitions, encoded.key, keys, values, first, last)
            out.rows_since_bootstrap += stop - start
            start = stop
        self.rows += rows
        if batch.commit_ts is None:
            top = batch.default_commit_ts
        else:
            top = pc.max(batch.commit_ts).as_py()
        self.max_commit_ts = max(self.max_commit_ts, top)

    def _send_run(
        self,
        topic: str,
        constant: int | None,
        partitions: list[int] | None,
        key: bytes | None,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        first: int,
        last: int,
    ) -> None:
        """Messages [first, last) of a batch: one `send_many` to a constant partition,
        else one `send` each to its own."""
        send_many = getattr(self.producer, "send_many", None)
        run_keys = None if keys is None else keys[first:last]
        if partitions is None and send_many is not None:
            assert constant is not None
            send_many(topic, constant, key, values[first:last], keys=run_keys)
            return
        send = self.producer.send
        for i in range(first, last):
            partition = constant if partitions is None else partitions[i]
            send(topic, partition, key if keys is None else keys[i], values[i])

    def check_order_batch(self, batch: ChangeBatch) -> None:
        """`check_order` for every row of a batch, in order."""
        indexes = batch.table.handle_key_indexes
        if indexes:
            self.order.check_batch(
                batch.table,
                [batch.columns[i] for i in indexes],
                batch.commit_ts,
                batch.default_commit_ts,
                batch.rows,
            )

    def report(self) -> TaskReport:
        """Counts come from the producer's delivery reports: acknowledged, not just sent."""
        delivered = self.producer.delivered
        topic_messages: dict[str, int] = {}
        topic_bytes: dict[str, int] = {}
        for (topic, _partition), stats in delivered.items():
            topic_messages[topic] = topic_messages.get(topic, 0) + stats.messages
            topic_bytes[topic] = topic_bytes.get(topic, 0) + stats.bytes
        return TaskReport(
            partition_id=self.partition_id,
            topics=dict(self.partition_counts),
            partitions=frozenset(delivered),
            max_commit_ts=self.max_commit_ts,
            rows=self.rows,
            messages=sum(topic_messages.values()),
            bytes=sum(topic_bytes.values()),
            topic_messages=topic_messages,
            topic_bytes=topic_bytes,
            diverted=self.diverted,
        )


def write_batches(
    batches: Iterable[pa.RecordBatch],
    plan: WritePlan,
    *,
    partition_id: int = 0,
    producer_factory: ProducerFactory = KafkaProducer,
    registry_factory: RegistryFactory | None = None,
) -> TaskReport:
    """Write one Spark partition: encode every row, send it, and return only after the
    broker acknowledged every message.

    Raises:
        InputError: a row cannot become a change event.
        MessageTooLargeError: an encoded message is above max-message-bytes.
        RegistryError: the schema registry refused a schema or was unreachable.
        DeliveryError: the broker was unreachable or refused a message.
    """
    config = plan.config
    registry = None
    if config.codec.protocol is Protocol.AVRO:
        if registry_factory is None:
            # Imported here: the registry client pulls in an HTTP stack only avro needs.
            from ticdc_sink.registry import ConfluentSchemaRegistry as registry_factory
        registry = registry_factory(config.registry, config.codec.subject_name_strategy)
    producer = producer_factory(config.kafka)
    try:
        task = _TaskWriter(plan, producer, partition_id, registry)
        for group in _change_batches(batches, plan, task.schema_for):
            if isinstance(group, ChangeBatch):
                task.write_batch(group)
            else:
                task.write_change(group)
        producer.flush()
        report = task.report()
    finally:
        producer.close()
        if registry is not None:
            registry.close()
    logger.info(
        "ticdc task %s wrote %d rows as %d messages (%d bytes, %d diverted as large) to %d "
        "partitions; max commit ts %d",
        partition_id,
        report.rows,
        report.messages,
        report.bytes,
        report.diverted,
        len(report.partitions),
        report.max_commit_ts,
    )
    return report


def _change_batches(
    batches: Iterable[pa.RecordBatch],
    plan: WritePlan,
    tables: Callable[[str, str], TableSchema],
) -> Iterator[ChangeBatch | RowChange]:
    """Each record batch as one ChangeBatch when all its rows are of one table, else (rows
    of several tables, interleaved) as RowChanges in input order."""
    layout = InputLayout(**plan.config.input.layout_fields())
    for batch in batches:
        groups = read_change_batches(
            batch,
            layout=layout,
            tables=tables,
            default_database=plan.tables.default_database,
            default_table=plan.tables.default_table,
            default_commit_ts=plan.commit_ts,
            time_zone=plan.config.codec.time_zone,
        )
        if len(groups) == 1 and groups[0].positions is None:
            yield groups[0]
            continue
        ordered: list[Any] = [None] * batch.num_rows
        for group in groups:
            assert group.positions is not None
            for position, change in zip(group.positions, group.to_changes(), strict=True):
                ordered[position] = change
        yield from ordered


def table_topic(config: SinkConfig, database: str, table: str) -> str:
    """The topic of a table: the first matching `dispatchers` rule's, else `topic`'s."""
    rule = rule_for(config.routing.dispatchers, database, table)
    expression = rule.topic if rule is not None and rule.topic else config.routing.topic
    return TopicRouter(expression).topic_for(database, table)


def send_schema_change(
    plan: WritePlan,
    previous: TableSchema | None,
    *,
    producer_factory: ProducerFactory = KafkaProducer,
) -> str | None:
    """The driver's step before a batch's tasks: when the table's schema differs from
    the one the last committed batch wrote (`previous`), or it is the table's first batch
    and `ddl-on-first-batch` is on, send the DDL message of the protocol to the table's
    topic ahead of the rows, to the partitions TiCDC sends DDL to.

    Returns the DDL text sent, or None when nothing was sent.
    """
    options = plan.config.codec
    table = plan.tables.named_table
    if options.protocol not in DDL_PROTOCOLS or table is None:
        return None
    wanted = options.ddl_on_first_batch if previous is None else options.ddl_on_schema_change
    query = schema_change.ddl_for(previous, table) if wanted else None
    if query is None:
        return None
    message = codec.encode_ddl(
        options,
        table,
        previous,
        query,
        commit_ts=plan.commit_ts,
        build_ts_ms=plan.build_ts_ms,
    )
    if message is None:
        return None
    topic = table_topic(plan.config, table.database, table.table)
    producer = producer_factory(plan.config.kafka)
    try:
        for partition in codec.ddl_partitions(options, producer.partition_count(topic)):
            producer.send(topic, partition, message.key, message.value)
        producer.flush()
    finally:
        producer.close()
    logger.info("ticdc: DDL for %s.%s sent to %s: %s", table.database, table.table, topic, query)
    return query


def batch_report(
    reports: Iterable[TaskReport | None],
    *,
    batch_id: int | None,
    commit_ts: int,
    watermark: int | None,
    seconds: float,
) -> dict[str, Any]:
    """What the driver records after a committed batch, for operators (one JSON object):
    counts from the tasks' delivery reports, per topic, large messages diverted, the
    watermark sent (None: none sent) and the time from planning to commit."""
    done = [r for r in reports if r is not None]
    topics: dict[str, dict[str, int]] = {}
    for report in done:
        for topic, count in report.topic_messages.items():
            entry = topics.setdefault(topic, {"messages": 0, "bytes": 0})
            entry["messages"] += count
            entry["bytes"] += report.topic_bytes.get(topic, 0)
    return {
        "batch_id": batch_id,
        "commit_ts": commit_ts,
        "tasks": len(done),
        "rows": sum(r.rows for r in done),
        "messages": sum(r.messages for r in done),
        "bytes": sum(r.bytes for r in done),
        "topics": dict(sorted(topics.items())),
        "diverted": sum(r.diverted for r in done),
        "max_commit_ts": max((r.max_commit_ts for r in done), default=0),
        "watermark": watermark,
        "seconds": round(seconds, 3),
    }


def emit_watermark(
    config: SinkConfig,
    reports: Iterable[TaskReport | None],
    *,
    last_sent: int | None,
    build_ts_ms: int,
    producer_factory: ProducerFactory = KafkaProducer,
) -> int | None:
    """The driver's commit step: a WATERMARK with the batch's max commit ts to every
    partition of every topic the batch touched, unless it would not move forward.

    Returns the watermark ts sent, or None when nothing was sent.
    """
    done = [r for r in reports if r is not None]
    topics = sorted({t for r in done for t in r.topics})
    ts = max((r.max_commit_ts for r in done), default=0)
    rows = sum(r.rows for r in done)
    diverted = _diverted_text(config, done)
    if not topics or ts == 0:
        logger.info("ticdc commit: %d rows%s, no topic touched, no watermark", rows, diverted)
        return None
    if last_sent is not None and ts <= last_sent:
        logger.info(
            "ticdc commit: %d rows%s; watermark %d not above the last one sent (%d), skipped",
            rows,
            diverted,
            ts,
            last_sent,
        )
        return None
    message = codec.encode_watermark(config.codec, ts, build_ts_ms=build_ts_ms)
    if message is None:
        return None
    producer = producer_factory(config.kafka)
    try:
        for topic in topics:
            for partition in range(producer.partition_count(topic)):
                producer.send(topic, partition, message.key, message.value)
        producer.flush()
    finally:
        producer.close()
    logger.info(
        "ticdc commit: %d rows, %d messages, %d bytes%s; watermark %d sent to topics %s",
        rows,
        sum(r.messages for r in done),
        sum(r.bytes for r in done),
        diverted,
        ts,
        ", ".join(topics),
    )
    return ts


def _diverted_text(config: SinkConfig, reports: list[TaskReport]) -> str:
    """ ", N messages diverted by <option> (above max-message-bytes)" for the commit log,
    empty when the option is none."""
    option = config.codec.large_message_handle_option
    if option is LargeMessageHandleOption.NONE:
        return ""
    count = sum(r.diverted for r in reports)
    return f", {count} messages diverted by {option.value} (above max-message-bytes)"
