"""The driver's steps around a batch's tasks: the DDL announced before them, and the
commit after them (schema and watermark recorded under the checkpoint location, then the
watermark sent, then the batch report).

Watermarks never go backwards for what a consumer reads: the commit step records a
watermark before it sends it, so a batch that cannot record one fails before anything of
its commit is out.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ticdc_sink import schema_change
from ticdc_sink.codec import protocols
from ticdc_sink.config import (
    FrozenMap,
    KafkaConfig,
    LargeMessageHandleOption,
    SinkConfig,
)
from ticdc_sink.errors import ConfigError
from ticdc_sink.producer import KafkaProducer, ProducerFactory
from ticdc_sink.schema import TableSchema, table_schema_from_json, table_schema_to_json
from ticdc_sink.state import SinkState, WatermarkRecord
from ticdc_sink.writer import rules
from ticdc_sink.writer.plan import WritePlan
from ticdc_sink.writer.report import TaskReport, batch_report

__all__ = [
    "abort_batch",
    "announce_schema",
    "commit_batch",
    "schema_change_query",
    "send_schema_change",
    "send_watermark",
    "watermark_kafka_config",
    "watermark_to_send",
]

# The logger operators know from before the split into a package (docs/guides/reports.md).
logger = logging.getLogger("ticdc_sink.writer")


def schema_change_query(plan: WritePlan, previous: TableSchema | None) -> str | None:
    """The DDL statement a batch announces before its rows (see `send_schema_change`), or
    None: not a DDL protocol, rows name their tables, or no change the options ask for."""
    options = plan.config.codec
    table = plan.tables.named_table
    if not options.sends_ddl or table is None:
        return None
    wanted = options.ddl_on_first_batch if previous is None else options.ddl_on_schema_change
    if not wanted:
        return None
    # Table routing: TiCDC rewrites the DDL to the target names, qualified with the
    # target schema (pingcap/ticdc routing/router.go ApplyToDDLEvent).
    routing = plan.config.routing
    routed = rules.routed(routing, table)
    before = None if previous is None else rules.routed(routing, previous)
    return schema_change.ddl_for(before, routed, qualified=routed is not table)


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
    query = schema_change_query(plan, previous)
    if query is None or table is None:
        return None
    routing = plan.config.routing
    message = protocols.encode_ddl(
        options,
        rules.routed(routing, table),
        None if previous is None else rules.routed(routing, previous),
        query,
        commit_ts=plan.commit_ts,
        build_ts_ms=plan.build_ts_ms,
    )
    if message is None:
        return None
    topic = rules.topic_for(routing, table.database, table.table)
    producer = producer_factory(plan.config.kafka)
    try:
        for partition in protocols.ddl_partitions(options, producer.partition_count(topic)):
            producer.send(topic, partition, message.key, message.value)
        producer.flush()
    finally:
        producer.close()
    logger.info("ticdc: DDL for %s.%s sent to %s: %s", table.database, table.table, topic, query)
    return query


def announce_schema(
    plan: WritePlan,
    state: SinkState | None,
    *,
    producer_factory: ProducerFactory = KafkaProducer,
) -> None:
    """DDL protocols: send the table's DDL message before the batch's rows when its
    schema changed since the last committed batch (known from the checkpoint location),
    once per micro-batch (recorded there), however often Spark asks for its writer."""
    table = plan.tables.named_table
    if table is None or not plan.config.codec.sends_ddl:
        return
    batch_id = plan.batch_id
    if state is not None and batch_id is not None and state.ddl_sent_for_batch(batch_id):
        return
    stored = state.last_table_schema(table.database, table.table) if state else None
    previous = table_schema_from_json(stored) if stored else None
    sent = send_schema_change(plan, previous, producer_factory=producer_factory)
    if sent is not None and state is not None and batch_id is not None:
        state.record_ddl_sent(batch_id, sent)


def commit_batch(
    plan: WritePlan,
    reports: Iterable[TaskReport | None],
    *,
    state: SinkState | None,
    producer_factory: ProducerFactory = KafkaProducer,
) -> dict[str, Any]:
    """The driver's commit step, once every task of the batch succeeded: record the
    table's schema and the watermark under the checkpoint location, then send the
    watermark, then log and keep the batch report. Returns the report.

    Everything that can fail the batch happens before the watermark is sent, so a failed
    batch leaves no watermark: a state that cannot be written fails here with nothing
    sent. What comes after the send (marking it acknowledged, keeping the report) cannot
    fail the batch any more; a failure there is logged as a warning.

    Raises:
        ConfigError: the state under checkpointLocation cannot be read or written.
        DeliveryError: the watermark was not acknowledged.
    """
    done = [r for r in reports if r is not None]
    config = plan.config
    record = state.watermark_record() if state is not None else None
    ts = watermark_to_send(config, done, last=record, batch_id=plan.batch_id)
    table = plan.tables.named_table
    if state is not None:
        if table is not None and config.codec.sends_ddl:
            state.record_table_schema(table.database, table.table, table_schema_to_json(table))
        if ts is not None:
            state.record_watermark(ts, plan.batch_id)
    if ts is not None:
        topics = sorted({t for r in done for t in r.topics})
        send_watermark(
            config, ts, topics, build_ts_ms=plan.build_ts_ms, producer_factory=producer_factory
        )
        logger.info(
            "ticdc commit: %d rows, %d messages, %d bytes%s; watermark %d sent to topics %s",
            sum(r.rows for r in done),
            sum(r.messages for r in done),
            sum(r.bytes for r in done),
            _diverted_text(config, done),
            ts,
            ", ".join(topics),
        )
        if state is not None:
            # The watermark is out: failing the batch now would leave a watermark for a
            # failed batch, so an unrecorded acknowledgement is a warning (a re-run of
            # this micro-batch then sends the same watermark again).
            try:
                state.confirm_watermark(ts)
            except ConfigError as exc:
                logger.warning("ticdc commit: watermark %d sent, but %s", ts, exc)
    started = min((r.planned_at for r in done if r.planned_at), default=plan.planned_at)
    report = batch_report(
        done,
        batch_id=plan.batch_id,
        commit_ts=plan.commit_ts,
        watermark=ts,
        seconds=time.time() - started,
    )
    line = json.dumps(report)
    logger.info("ticdc batch report %s", line)
    if state is not None:
        name = str(plan.batch_id) if plan.batch_id is not None else f"job-{plan.commit_ts}"
        try:
            state.record_report(name, line)
        except ConfigError as exc:
            # Same reason: the batch is committed; its report is in the line above.
            logger.warning("ticdc batch report not kept: %s", exc)
    return report


def abort_batch(reports: Sequence[TaskReport | None]) -> None:
    """The driver's abort step, when a task of the batch failed (`reports`: the tasks',
    None for one that did not succeed): nothing sent is taken back, and no watermark goes
    out, so it says so."""
    done = [r for r in reports if r is not None]
    logger.warning(
        "ticdc write aborted: %d of %d tasks reported success; messages already sent "
        "stay in Kafka (at-least-once) and no watermark was sent for this batch",
        len(done),
        len(reports),
    )


def watermark_to_send(
    config: SinkConfig,
    reports: Iterable[TaskReport | None],
    *,
    last: WatermarkRecord | None,
    batch_id: int | None,
) -> int | None:
    """The watermark a committed batch sends: its max commit ts, to every partition of
    every topic it touched, unless that would not move forward (`last`, the watermark
    recorded before). A re-run of the micro-batch that recorded `last` sends it again
    only if its first run did not see it acknowledged. Logs why none is sent.

    Returns the watermark ts to send, or None.
    """
    done = [r for r in reports if r is not None]
    topics = sorted({t for r in done for t in r.topics})
    ts = max((r.max_commit_ts for r in done), default=0)
    rows = sum(r.rows for r in done)
    diverted = _diverted_text(config, done)
    below = sum(r.below_watermark for r in done)
    if below:
        logger.warning(
            "ticdc commit: %d rows had a commit ts at or below an earlier watermark and were "
            "sent (allow-commit-ts-below-watermark); consumers read them after that watermark",
            below,
        )
    if not topics or ts == 0:
        logger.info("ticdc commit: %d rows%s, no topic touched, no watermark", rows, diverted)
        return None
    if protocols.encode_watermark(config.codec, ts, build_ts_ms=0) is None:
        logger.info(
            "ticdc commit: %d rows%s; protocol %s sends no watermark here",
            rows,
            diverted,
            config.codec.protocol.value,
        )
        return None
    if last is None or ts > last.ts:
        return ts
    if batch_id is not None and last.batch_id == batch_id:
        if not last.sent:
            logger.info(
                "ticdc commit: %d rows%s; re-sending watermark %d, which this micro-batch's "
                "first run recorded but did not see acknowledged",
                rows,
                diverted,
                last.ts,
            )
            return last.ts
        logger.info(
            "ticdc commit: %d rows%s; watermark %d was sent by this micro-batch's first run, "
            "not sent again",
            rows,
            diverted,
            last.ts,
        )
        return None
    log = logger.info if last.legacy else logger.warning
    log(
        "ticdc commit: %d rows%s; no watermark: the batch's max commit ts %d is not above "
        "the last watermark sent, %d",
        rows,
        diverted,
        ts,
        last.ts,
    )
    return None


def send_watermark(
    config: SinkConfig,
    ts: int,
    topics: Iterable[str],
    *,
    build_ts_ms: int,
    producer_factory: ProducerFactory = KafkaProducer,
) -> None:
    """A WATERMARK of `ts` to every partition of every topic in `topics`, acknowledged:
    one metadata request for all the topics, one `send_many` per topic, one flush (the
    same message everywhere, so memory is one message and librdkafka's bounded queue).

    Raises:
        DeliveryError: the broker was unreachable or refused a message.
    """
    message = protocols.encode_watermark(config.codec, ts, build_ts_ms=build_ts_ms)
    assert message is not None  # watermark_to_send chose a protocol that sends one
    producer = producer_factory(watermark_kafka_config(config.kafka))
    try:
        for topic, count in producer.partition_counts(topics).items():
            producer.send_many(topic, list(range(count)), message.key, [message.value] * count)
        producer.flush()
    finally:
        producer.close()


def watermark_kafka_config(kafka: KafkaConfig) -> KafkaConfig:
    """The producer settings of the watermark fan-out: the tasks' settings (acks=all),
    without the idempotent producer unless a `kafka.enable.idempotence` option asks for
    it. Idempotence keeps order and drops duplicates among the messages of one producer
    to one partition; the fan-out sends one message per partition, which cannot be
    reordered, and a duplicate is the same watermark again (harmless: watermarks are
    compared, not counted). The rows it follows were acknowledged before the commit.
    Measured (benchmarks/RESULTS.md): 3,200 partitions flushed in ~0.5 s without it,
    ~2.4 s with it, on the test broker."""
    if "enable.idempotence" in kafka.client_config:
        return kafka
    settings = {**kafka.client_config, "enable.idempotence": "false"}
    return attrs.evolve(kafka, client_config=FrozenMap(settings))


def _diverted_text(config: SinkConfig, reports: list[TaskReport]) -> str:
    """ ", N messages diverted by <option> (above max-message-bytes)" for the commit log,
    empty when the option is none."""
    option = config.codec.large_message_handle_option
    if option is LargeMessageHandleOption.NONE:
        return ""
    count = sum(r.diverted for r in reports)
    return f", {count} messages diverted by {option.value} (above max-message-bytes)"
