"""A batch read's plan, made once on the driver: the topics read, the offset range of every
partition of each, the table schemas found in them, and the table whose columns the read
returns; with `minPartitions`, the parts the ranges split into (`plan_parts`).

This module knows Kafka (through `TopicLog`) and schemas; nothing of Spark.
"""

from __future__ import annotations

import contextlib

import attrs

from ticdc_sink.decode import DecodedBootstrap, DecodedDDL, DecodedWatermark
from ticdc_sink.decode.simple import SimpleDecoder
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import (
    BadMessages,
    SchemaLookup,
    decode_events,
    describes_rows,
    new_decoder,
)
from ticdc_sink.read.discover import choose_table, discover_tables
from ticdc_sink.read.offsets import OffsetRange, parse_offsets, plan_ranges
from ticdc_sink.read.options import ReadConfig, select_topics
from ticdc_sink.read.split import Part, part_counts, split_ranges
from ticdc_sink.schema import TableSchema

__all__ = ["ReadPlan", "find_boundaries", "plan_parts", "plan_read"]


@attrs.frozen
class ReadPlan:
    """What every task of a read needs; picklable. `topics` are the topics read (the
    pattern's matches, for `topicPattern`)."""

    config: ReadConfig
    ranges: tuple[OffsetRange, ...]
    table: TableSchema
    known: tuple[TableSchema, ...]
    topics: tuple[str, ...] = ()


def plan_read(
    config: ReadConfig, log: TopicLog | None = None, *, schema_for_id: SchemaLookup | None = None
) -> ReadPlan:
    """Find the topics, resolve the offsets against their partitions and find the read's
    table (`schema_for_id`: avro schemas, as `new_decoder`).

    Raises:
        ConfigError: a bad startingOffsets / endingOffsets, or a topicPattern that matches
            no topic.
        SchemaError: no table, or tables with different columns (see `choose_table`).
        DeliveryError: the brokers or a topic cannot be reached.
        DecodeError: a message that is not of the protocol.
    """
    owned = log is None
    source = TopicLog(config) if log is None else log
    try:
        topics = select_topics(config, source.topics() if config.topic_pattern else ())
        starting = parse_offsets(
            config.starting_offsets or "earliest", option="startingOffsets", topics=topics
        )
        ending = parse_offsets(config.ending_offsets, option="endingOffsets", topics=topics)
        bounds = source.all_bounds(topics)
        ranges = plan_ranges(bounds, starting, ending)
        starts = [(r, bounds[r.topic, r.partition]) for r in ranges]
        found = discover_tables(config, source, starts, schema_for_id=schema_for_id)
    finally:
        if owned:
            source.close()
    return ReadPlan(config, tuple(ranges), choose_table(config, found), found.tables, topics)


def plan_parts(
    plan: ReadPlan, log: TopicLog | None = None, *, schema_for_id: SchemaLookup | None = None
) -> tuple[list[Part], tuple[TableSchema, ...]]:
    """The parts of the read's ranges with data (`split.split_ranges`, for
    `minPartitions`), each with its partition's resolved ts before it, and the table
    schemas the tasks need: the plan's, and those met in the split ranges (a part that
    starts after a Simple schema message has not read it itself).

    A range is scanned (`find_boundaries`) only when it is to be split, unless no part
    needs a state: `replays=keep` of a protocol whose rows carry their column types.

    Raises:
        DecodeError, DeliveryError: as reading the topic.
    """
    ranges = [(r, 0) for r in plan.ranges if not r.empty]
    counts = part_counts([r.end - r.start for r, _ in ranges], plan.config.min_partitions)
    if all(count == 1 for count in counts):
        return ranges, plan.known
    decoder = new_decoder(plan.config, plan.known, schema_for_id=schema_for_id)
    if plan.config.keep_replays and describes_rows(decoder):
        return split_ranges(ranges, plan.config.min_partitions, None), plan.known
    owned = log is None
    source = TopicLog(plan.config) if log is None else log
    boundaries = {}
    known = {(t.database, t.table, t.version): t for t in plan.known}
    try:
        for (offsets, _), count in zip(ranges, counts, strict=True):
            if count > 1:
                found, tables = find_boundaries(
                    plan.config, plan.known, offsets, source, schema_for_id=schema_for_id
                )
                boundaries[offsets.topic, offsets.partition] = found
                known.update(((t.database, t.table, t.version), t) for t in tables)
    finally:
        if owned:
            source.close()
    if plan.config.keep_replays:  # Simple: anywhere, with the schemas met
        return split_ranges(ranges, plan.config.min_partitions, None), tuple(known.values())
    anywhere = not plan.config.watermark_consistency  # the resolved ts alone counts
    parts = split_ranges(ranges, plan.config.min_partitions, boundaries, anywhere=anywhere)
    return parts, tuple(known.values())


def find_boundaries(
    config: ReadConfig,
    known: tuple[TableSchema, ...],
    offsets: OffsetRange,
    log: TopicLog,
    *,
    schema_for_id: SchemaLookup | None = None,
) -> tuple[list[tuple[int, int]], list[TableSchema]]:
    """Where in `offsets` a part may start (`split`): the offset just after each
    watermark that raised the resolved ts (from 0 at the range's start, as a batch read's
    replay rule), with that ts; and the table schemas the range's schema messages carry.
    Simple rows of a known schema are recognised without being decoded.

    Raises:
        DecodeError: a message that is not of the protocol (unless on-bad-message=skip).
        DeliveryError: the brokers failed the read.
    """
    config = config.for_topic(offsets.topic)
    decoder = new_decoder(config, known, schema_for_id=schema_for_id)
    simple = decoder if isinstance(decoder, SimpleDecoder) else None
    # Skipped here without a report: the tasks meet the same messages and report them.
    skipped = BadMessages() if config.skip_bad_messages else None
    resolved_ts = 0
    found: list[tuple[int, int]] = []
    tables: list[TableSchema] = []
    with contextlib.closing(log.read(offsets)) as records:
        for record in records:
            if simple is not None and simple.plain_row(record.value) is not None:
                continue
            for event in decode_events(decoder, record, config.topic, skipped):
                if isinstance(event, DecodedWatermark) and event.commit_ts > resolved_ts:
                    resolved_ts = event.commit_ts
                    found.append((record.offset + 1, resolved_ts))
                elif isinstance(event, DecodedBootstrap | DecodedDDL) and event.table is not None:
                    tables.append(event.table)
    return found, tables
