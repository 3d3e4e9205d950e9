"""A task's read: the messages of one offset range, decoded, as record batches of the
read's table.

Watermarks, BOOTSTRAP and DDL messages are not rows: they are decoded (a schema message
teaches the decoder a table) and left out of the output. Rows of tables the options do not
select are left out; a selected row whose table has other columns than the read's schema
fails the read, naming both (a read returns one set of columns).

This module knows decoded events and Arrow; nothing of Spark.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ticdc_sink.decode import DecodedRow, DecodedWatermark
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.producer import Record
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import BadMessages, decode_record, new_decoder
from ticdc_sink.read.discover import is_selected
from ticdc_sink.read.evolution import adds_columns_only
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.replay import ReplayFilter, has_row_key
from ticdc_sink.read.rows import RowBatchBuilder, same_columns
from ticdc_sink.schema import TableSchema

__all__ = ["BATCH_ROWS", "read_range"]

#: Rows per record batch handed to Spark (Spark's own Arrow batches default to 10 000).
BATCH_ROWS = 10_000


def read_range(
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    offsets: OffsetRange,
    *,
    log: TopicLog | None = None,
    batch_rows: int = BATCH_ROWS,
    replays: ReplayFilter | None = None,
) -> Iterator[pa.RecordBatch]:
    """The row changes in `offsets` of the tables the options select, in offset order.

    `output` is the read's table (its columns are the output's), `known` the schemas found
    on the driver. `log` reads the messages (a new `TopicLog` when None, closed at the end).
    `replays`, when given, drops (and counts) the rows TiCDC replayed (a streaming read).

    With `on-bad-message=skip` a message that does not decode is left out, and the count
    logged at the end.

    Raises:
        DecodeError: a message that is not of the protocol (unless skipped), or a row whose
            schema is not known (each naming topic, partition and offset).
        SchemaError: a selected row of a table with other columns than `output`.
        DeliveryError: the brokers failed the read.
    """
    owned = log is None
    source = TopicLog(config) if log is None else log
    try:
        decoder = new_decoder(config, known)
        builder = RowBatchBuilder(output, kafka_columns=config.kafka_columns)
        checked: set[tuple[str, str, int]] = set()
        keyed: dict[tuple[str, str, int], bool] = {}
        skipped = BadMessages() if config.skip_bad_messages else None
        for record in source.read(offsets):
            event = decode_record(decoder, record, config.topic, skipped)
            if isinstance(event, DecodedWatermark) and replays is not None:
                replays.see_watermark(event)
            if not isinstance(event, DecodedRow):
                continue
            if not is_selected(config, event.database, event.table):
                continue
            if replays is not None and not replays.admit(
                event, keyed=_keyed(decoder, event, keyed)
            ):
                continue
            version = (event.database, event.table, event.schema_version)
            if version not in checked:
                _check_fits(decoder, event, record, config, output)
                checked.add(version)
            if not event.typed or event.handle_key_only:
                raise _incomplete(event, record, config.topic)
            builder.add(event, record, config.topic)
            if len(builder) >= batch_rows:
                yield builder.flush()
        if len(builder):
            yield builder.flush()
        if skipped is not None:
            skipped.report(
                f"the read of topic {offsets.topic} partition {offsets.partition} offsets "
                f"{offsets.start}..{offsets.end - 1}"
            )
    finally:
        if owned:
            source.close()


def _keyed(decoder: object, row: DecodedRow, cache: dict[tuple[str, str, int], bool]) -> bool:
    """Whether the row's table has a row key (`replay.has_row_key`), once per version."""
    version = (row.database, row.table, row.schema_version)
    found = cache.get(version)
    if found is None:
        lookup = getattr(decoder, "table", None)
        found = cache[version] = has_row_key(lookup(*version) if lookup else None)
    return found


def _check_fits(
    decoder: object, row: DecodedRow, record: Record, config: ReadConfig, output: TableSchema
) -> None:
    topic = config.topic
    lookup = getattr(decoder, "table", None)
    table = lookup(row.database, row.table, row.schema_version) if lookup else None
    if table is None:
        raise _incomplete(row, record, topic)
    if config.ignore_new_columns and adds_columns_only(output, table):
        return  # the builder takes the output's columns only
    if not same_columns(table, output):
        raise SchemaError(
            f"topic {topic} partition {record.partition} offset {record.offset}: "
            f"{row.database}.{row.table} schema version {row.schema_version} has columns "
            f"({', '.join(table.column_names)}), not the read's "
            f"{output.database}.{output.table} ({', '.join(output.column_names)}); pick one "
            "table with options database and table, or read the offsets before and after "
            "the schema change separately (startingOffsets, endingOffsets)"
        )


def _incomplete(row: DecodedRow, record: Record, topic: str) -> DecodeError:
    where = f"topic {topic} partition {record.partition} offset {record.offset}"
    if row.handle_key_only:
        return DecodeError(
            f"{where}: {row.op.value} {row.database}.{row.table} carries only its handle "
            "key (written with large-message-handle-option=handle-key-only); the full row "
            "is not in the topic"
        )
    return DecodeError(
        f"{where}: no schema of {row.database}.{row.table} version {row.schema_version} "
        "was found before this row (Simple sends one in BOOTSTRAP and DDL messages); read "
        "from earlier offsets (startingOffsets)"
    )
