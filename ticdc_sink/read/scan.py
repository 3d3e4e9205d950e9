"""A task's read: the messages of one offset range, decoded, as record batches of the
read's table.

Watermarks (resolved events), BOOTSTRAP and DDL messages are not rows: they are decoded
(a Simple schema message teaches the decoder a table) and left out of the output. Rows of
tables the options do not select are left out; a selected row whose table has other
columns than the read's schema fails the read, naming both (a read returns one set of
columns). Simple rows are checked by their schema version; rows of the protocols that
carry no schema version (every other) by their column names. A stream whose driver does
not read the rows (`driver-scan=watermarks`) passes `changes`: the task calls it at the
schema message (DDL, BOOTSTRAP) or first row of a selected table whose columns no longer
fit the stream's (`evolution.changes_columns`), and it fails the micro-batch
(`stream.refuse_changes`).

Row messages that need nothing but their values typed are read a run at a time,
column-wise, when the decoder offers it: by plain rows (`ColumnwiseDecoder`: Simple's,
whose runs are `codec/simple/read_columns.py`) or by whole records (`RecordRunDecoder`:
avro's, records whose writer schemas fit the read, `codec/avro/read_columns.py`;
canal-json's, rows of the read's columns, `codec/canal_json/read_columns.py`); every
other message, and any run with something unusual in it, takes the row path (a
`DecodedRow` per message, `rows.RowBatchBuilder`), whose results and errors the
column-wise path gives exactly, in the same order and the same batches.

A task of packed ranges (`read_parts`) reads each as a task of its own would, but sets up
once what follows from the options and the driver's schemas alone (`RangeSetup`), holds
its rows across ranges, cut into batches where one range of them all would be cut, and
reads a range of fewer than `COLUMNWISE_OFFSETS` offsets by the row path: a stream over a
thousand partitions gives each task a thousand ranges of a few rows, which spent a few
milliseconds each on a decoder, a builder, runs and record batches of their own.

This module knows decoded events and Arrow; nothing of Spark.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, cast, runtime_checkable

import pyarrow as pa

from ticdc_sink.decode import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedRow,
    DecodedWatermark,
    Decoder,
    PlainRow,
)
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import (
    BadMessages,
    SchemaLookup,
    decode_events,
    describes_rows,
    new_decoder,
    range_decoder,
    row_message_test,
)
from ticdc_sink.read.discover import is_selected
from ticdc_sink.read.evolution import adds_columns_only, changes_columns
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.read.replay import ReplayFilter, RowKeys, replay_filter
from ticdc_sink.read.rows import RowBatchBuilder, same_columns
from ticdc_sink.read.split import Part
from ticdc_sink.redaction import mask_uri
from ticdc_sink.schema import TableSchema

__all__ = [
    "BATCH_ROWS",
    "COLUMNWISE_OFFSETS",
    "Changes",
    "ColumnRun",
    "ColumnwiseDecoder",
    "RangeSetup",
    "RecordRun",
    "RecordRunDecoder",
    "read_parts",
    "read_range",
]

logger = logging.getLogger(__name__)

#: What a stream's task does at a selected table whose columns no longer fit the read's
#: (`read_range`'s `changes`), with the topic and message it met it in: it raises.
Changes = Callable[[TableSchema, str, Record], None]

#: Rows per record batch handed to Spark (Spark's own Arrow batches default to 10 000).
BATCH_ROWS = 10_000
#: The offsets from which a packed task's range is read column-wise (`read_parts`): below,
#: its few rows cost less by the row path, into the builder the task's ranges share, than
#: a column-wise batch of their own.
COLUMNWISE_OFFSETS = 64


class ColumnRun(Protocol):
    """Consecutive plain rows of tables with the read's columns, built into one record
    batch of `rows.arrow_schema(output)` column by column. Single-threaded: one per task."""

    def __len__(self) -> int: ...

    def add(self, row: PlainRow, record: Record) -> None:
        """Add a plain row; `record` is the message it came from."""
        ...

    def take(self) -> tuple[list[Record], pa.RecordBatch | None]:
        """The run's records and its record batch, and an empty run; the batch is None
        when the row path must decode the records (something in the run is unusual)."""
        ...


@runtime_checkable
class ColumnwiseDecoder(Decoder, Protocol):
    """A decoder whose row messages a read may build column-wise: it tells a plain row
    (`plain_row`, None for any other message), knows its tables by schema version and
    gives the run that builds them (`column_run`)."""

    def plain_row(self, value: bytes | None) -> PlainRow | None: ...

    def table(self, database: str, table: str, version: int) -> TableSchema | None: ...

    def column_run(
        self, output: TableSchema, *, kafka_columns: bool, topic: str, headers: bool = False
    ) -> ColumnRun: ...


class RecordRun(Protocol):
    """Consecutive records a decoder reads column-wise as they come (`extend`), without a
    plain row per message, built into one record batch of `rows.arrow_schema(output)`.
    Single-threaded: one per task."""

    def __len__(self) -> int: ...

    def extend(self, records: Sequence[Record], start: int, room: int) -> int:
        """Add `records` from `start` on while each may join the run, at most `room` of
        them; the index of the first not added (`len(records)`: all were)."""
        ...

    def take(
        self, admit: Callable[[Sequence[int]], list[bool]] | None = None
    ) -> tuple[list[Record], pa.RecordBatch | None]:
        """The run's record batch (the rows whose commit ts `admit` admits, given them
        all at once) and no records, and an empty run; or, when the row path must decode
        the records, the run's records and no batch, and `admit` has then seen none of
        them."""
        ...


@runtime_checkable
class RecordRunDecoder(Decoder, Protocol):
    """A decoder that reads whole records column-wise (`record_run`): those whose replays
    the commit ts alone decides (`replay.ReplayFilter.admit_commit_ts_each`)."""

    def record_run(
        self,
        output: TableSchema,
        *,
        selected: Callable[[str, str], bool],
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
    ) -> RecordRun: ...


class RangeSetup:
    """What the ranges a task reads one after the other (`read_parts`) share, made once:
    what follows from the read's options and the driver's schemas alone, and the rows
    read and not handed out yet. The decoder is prepared with the driver's schemas, and
    each range takes its own of it (`decoding.range_decoder`: Simple's a copy, so that
    what a partition's BOOTSTRAP and DDL messages teach stays in its range; any other's
    shared). The rows are held across ranges (`_HeldRows`), so that a task of many small
    ranges builds a record batch per `BATCH_ROWS` rows, not several per range (a value
    Arrow refuses, which TiCDC never writes, fails the task when its batch is built,
    naming its topic, partition and offset). Single-threaded: one per task."""

    def __init__(
        self,
        config: ReadConfig,
        output: TableSchema,
        known: tuple[TableSchema, ...],
        *,
        schema_for_id: SchemaLookup | None = None,
    ) -> None:
        self.decoder = new_decoder(config, known, schema_for_id=schema_for_id)
        self.column_runs = isinstance(self.decoder, ColumnwiseDecoder)
        self.record_runs = isinstance(self.decoder, RecordRunDecoder)
        builder = RowBatchBuilder(
            output, kafka_columns=config.kafka_columns, headers=config.include_headers
        )
        self.held = _HeldRows(builder)


def read_range(
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    offsets: OffsetRange,
    *,
    log: TopicLog | None = None,
    batch_rows: int = BATCH_ROWS,
    schema_for_id: SchemaLookup | None = None,
    replays: ReplayFilter | None = None,
    columnwise: bool = True,
    changes: Changes | None = None,
    setup: RangeSetup | None = None,
) -> Iterator[pa.RecordBatch]:
    """The row changes in `offsets` of the tables the options select, in offset order.

    `output` is the read's table (its columns are the output's), `known` the schemas found
    on the driver. `log` reads the messages (a new `TopicLog` when None, closed at the end);
    `schema_for_id` gives avro schemas, as `new_decoder`. `replays`, when given, drops the
    rows TiCDC replayed (`replay.replay_filter`: batch and streaming reads alike), and the
    count is logged at the end. Runs of plain rows are built column-wise (a
    `ColumnwiseDecoder`'s `column_run`: Simple's), runs of records too (a
    `RecordRunDecoder`'s `record_run`: avro's, canal-json's), unless `columnwise` is
    False: then every message takes the row path, the reference the column-wise one must
    match.

    With `on-bad-message=skip` a message that does not decode is left out, and the count
    logged at the end. `changes` (a stream under `driver-scan=watermarks`) is called at a
    schema message or row of a selected table whose columns do not fit `output`'s.
    `setup` is what the ranges of a task share (`read_parts`: made of the same `config`
    but for its topic, `output`, `known` and `schema_for_id`): the rows held at the end
    stay held in it, for the next range; without it, they are handed out.

    Raises:
        DecodeError: a message that is not of the protocol (unless skipped), or a row whose
            schema is not known (each naming topic, partition and offset).
        SchemaError: a selected row of a table with other columns than `output` (or as
            `changes`).
        DeliveryError: the brokers failed the read.
    """
    owned = log is None
    source = TopicLog(config) if log is None else log
    alone = setup is None
    try:
        if setup is None:
            setup = RangeSetup(config, output, known, schema_for_id=schema_for_id)
        decoder = range_decoder(setup.decoder)
        held = setup.held
        builder = held.builder
        checked: set[tuple[str, str, int]] = set()
        names = set(output.column_names)
        versioned = not describes_rows(decoder)  # Simple: a schema version in every row
        history: list[OffsetRange] = []  # the partition's schemas read (`changes`)
        keyed = RowKeys(decoder)
        skipped = BadMessages() if config.skip_bad_messages else None

        def decode_rows(record: Record, *, admitted: bool = False) -> Iterator[pa.RecordBatch]:
            """The rows of `record` by the row path; `admitted`: a plain row whose replay
            check is done."""
            for event in decode_events(decoder, record, config.topic, skipped):
                if isinstance(event, DecodedWatermark) and replays is not None:
                    replays.see_watermark(event)
                if changes is not None and isinstance(event, DecodedBootstrap | DecodedDDL):
                    changed = event.table
                    if changed is not None and _changes(config, output, changed):
                        changes(changed, config.topic, record)
                if not isinstance(event, DecodedRow):
                    continue
                if not is_selected(config, event.database, event.table):
                    continue
                if not (admitted or replays is None or replays.admit(event, keyed=keyed(event))):
                    continue
                if not event.typed and versioned and changes is not None and not history:
                    history.append(offsets)  # once: the schemas before the range
                    _learn_schemas(decoder, source, config, offsets)
                    yield from decode_rows(record, admitted=True)  # a Simple row: one event
                    return
                unfollowed = event.claim_check_location and not config.claim_check_storage_uri
                if not event.typed or event.handle_key_only or unfollowed:
                    raise _incomplete(event, record, config.topic, versioned=versioned)
                version = (event.database, event.table, event.schema_version)
                if not versioned:
                    _check_names(event, record, config, output, names)
                elif version not in checked:
                    _check_fits(decoder, event, record, config, output, changes)
                    checked.add(version)
                builder.add(event, record, config.topic)
                if len(held) >= batch_rows:
                    yield held.take()

        by_columns = cast(ColumnwiseDecoder, decoder) if columnwise and setup.column_runs else None
        run = None
        if by_columns is not None:
            run = by_columns.column_run(
                output,
                kafka_columns=config.kafka_columns,
                topic=config.topic,
                headers=config.include_headers,
            )

        records_run = None
        if columnwise and setup.record_runs:
            records_run = cast(RecordRunDecoder, decoder).record_run(
                output,
                selected=lambda database, table: is_selected(config, database, table),
                kafka_columns=config.kafka_columns,
                topic=config.topic,
                headers=config.include_headers,
            )
        admit = None if replays is None else replays.admit_commit_ts_each

        def end_run(
            taken: tuple[list[Record], pa.RecordBatch | None], *, admitted: bool = True
        ) -> Iterator[pa.RecordBatch]:
            """Hold a run's batch; `admitted`: its records passed the replay check."""
            records, batch = taken
            if batch is None:  # something unusual: the row path decides
                for record in records:
                    yield from decode_rows(record, admitted=admitted)
                return
            held.add(batch)
            if len(held) >= batch_rows:
                yield held.take()

        fits: dict[tuple[str, str, int], bool] = {}
        for chunk in source.read_chunks(offsets):
            at, count = 0, len(chunk)
            while at < count:
                if records_run is not None:
                    # As many as fit and the batch has room for: a batch is cut where the
                    # row path would cut it.
                    room = batch_rows - len(held) - len(records_run)
                    added = records_run.extend(chunk, at, room)
                    if added > at:
                        at = added
                        if len(records_run) + len(held) >= batch_rows:
                            yield from end_run(records_run.take(admit), admitted=False)
                        continue
                    if len(records_run):
                        yield from end_run(records_run.take(admit), admitted=False)
                record = chunk[at]
                at += 1
                plain = None if by_columns is None else by_columns.plain_row(record.value)
                if plain is not None and run is not None:
                    version = (plain.database, plain.table, plain.schema_version)
                    fit = fits.get(version)
                    if fit is None and version in checked:
                        assert by_columns is not None  # the plain row's decoder
                        fit = fits[version] = _fits_exactly(by_columns, version, config, output)
                    if fit:
                        if replays is None or replays.admit(
                            plain, keyed=replays.identical and keyed(plain)
                        ):
                            run.add(plain, record)
                        else:
                            # A replay, dropped; the row path decodes before it drops, so
                            # one whose values do not decode fails the read (naming its
                            # offset) or, skipped, counts as a bad message, not a replay.
                            if not decode_events(decoder, record, config.topic, skipped):
                                replays.take_back_drop()
                        if len(run) + len(held) >= batch_rows:
                            yield from end_run(run.take())
                        continue
                if run is not None and len(run):
                    yield from end_run(run.take())
                yield from decode_rows(record)
        if run is not None and len(run):
            yield from end_run(run.take())
        if records_run is not None and len(records_run):
            yield from end_run(records_run.take(admit), admitted=False)
        if alone and len(held):
            yield held.take()
        what = (
            f"the read of topic {offsets.topic} partition {offsets.partition} offsets "
            f"{offsets.start}..{offsets.end - 1}"
        )
        if replays is not None and replays.dropped:
            logger.info(
                "ticdc: %s dropped %d row(s) TiCDC replayed (at or below the partition's "
                "last watermark, or identical to one since it) and kept %d; option "
                "replays=keep keeps every row",
                what,
                replays.dropped,
                replays.rows,
            )
        if replays is not None and replays.unremembered:
            logger.warning(
                "ticdc: %s met more than %d rows since a watermark; the last %d of them were "
                "checked against the first but not remembered, so a replay of one of them "
                "was kept",
                what,
                replays.window,
                replays.unremembered,
            )
        if skipped is not None:
            skipped.report(what)
    finally:
        if owned:
            source.close()


def read_parts(
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    parts: Sequence[Part],
    *,
    log: TopicLog | None = None,
    changes: Changes | None = None,
    schema_for_id: SchemaLookup | None = None,
    columnwise: bool = True,
) -> Iterator[pa.RecordBatch]:
    """The rows of one task's parts (`split.pack_parts`), one part after the other through
    one consumer (`log`; a new `TopicLog` when None, closed at the end), each part read as a
    task of its own reads it: its topic's config, its replays dropped from the resolved ts
    before it, a decoder of its own (`RangeSetup`: what follows from the options and
    `known` alone is made once); `changes`, `schema_for_id` and `columnwise` as
    `read_range`'s; a part of fewer than `COLUMNWISE_OFFSETS` offsets by the row path.
    The parts' rows are held across parts and handed out in batches cut where one range
    of them all would be cut (`BATCH_ROWS` rows): a task of a thousand small ranges gives
    Spark a few batches, not one or more per range."""
    owned = log is None
    source = TopicLog(config) if log is None else log
    try:
        setup = RangeSetup(config, output, known, schema_for_id=schema_for_id)
        configs: dict[str, ReadConfig] = {}  # each topic's
        for offsets, resolved_ts in parts:
            part = configs.get(offsets.topic)
            if part is None:
                part = configs[offsets.topic] = config.for_topic(offsets.topic)
            yield from read_range(
                part,
                output,
                known,
                offsets,
                log=source,
                schema_for_id=schema_for_id,
                replays=replay_filter(part, resolved_ts),
                columnwise=columnwise and offsets.end - offsets.start >= COLUMNWISE_OFFSETS,
                changes=changes,
                setup=setup,
            )
        if len(setup.held):
            yield setup.held.take()
    finally:
        if owned:
            source.close()


class _HeldRows:
    """The rows read and not handed out yet (a range's, or those of a task's ranges one
    after the other), in the order read: finished column-wise runs (and the builder's
    rows before each), then the builder's rows. Handed out as one record batch once
    `batch_rows` are held, so batches are cut where the row path alone would cut them."""

    def __init__(self, builder: RowBatchBuilder) -> None:
        self.builder = builder
        self._batches: list[pa.RecordBatch] = []
        self._rows = 0

    def __len__(self) -> int:
        return self._rows + len(self.builder)

    def add(self, batch: pa.RecordBatch) -> None:
        """Hold `batch`, after the builder's rows."""
        self.flush()
        self._batches.append(batch)
        self._rows += batch.num_rows

    def flush(self) -> None:
        """Hold the builder's rows as a batch, after the others."""
        if len(self.builder):
            self._rows += len(self.builder)
            self._batches.append(self.builder.flush())

    def take(self) -> pa.RecordBatch:
        """Every row held, as one record batch (there is at least one)."""
        self.flush()
        batches, self._batches, self._rows = self._batches, [], 0
        return _joined(batches)


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """`batches` (at least one, of one schema) as one record batch."""
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def _fits_exactly(
    decoder: ColumnwiseDecoder,
    version: tuple[str, str, int],
    config: ReadConfig,
    output: TableSchema,
) -> bool:
    """Whether plain rows of this (database, table, schema version) may join a run: the
    table is selected and has exactly the read's columns. Asked once the row path has
    checked the version (its first row), so that a row it refuses still fails there."""
    table = decoder.table(*version)
    return (
        table is not None
        and is_selected(config, table.database, table.table)
        and same_columns(table, output)
    )


def _learn_schemas(
    decoder: Decoder, log: TopicLog, config: ReadConfig, offsets: OffsetRange
) -> None:
    """Teach `decoder` the schema messages of `offsets`' partition before it, from its
    first offset (rows peeked and skipped): a stream's task under `driver-scan=watermarks`
    meets a row whose schema came in an earlier micro-batch, which the driver (reading no
    rows) did not look up, as it does under `driver-scan=all`. The range's own read is
    under way on `log`, so the partition's beginning is read through a log of its own
    (`TopicLog.fork`)."""
    is_row = row_message_test(decoder)
    skipped = BadMessages() if config.skip_bad_messages else None
    with contextlib.closing(log.fork()) as history:
        low = history.bounds(offsets.topic)[offsets.partition][0]
        before = OffsetRange(offsets.topic, offsets.partition, low, offsets.start)
        with contextlib.closing(history.read(before)) as records:
            for record in records:
                if not is_row(record):
                    for _ in decode_events(decoder, record, config.topic, skipped):
                        pass  # decoding a schema message teaches the decoder its table


def _changes(config: ReadConfig, output: TableSchema, table: TableSchema) -> bool:
    """Whether `table` is selected and its rows do not fit `output`'s columns."""
    return is_selected(config, table.database, table.table) and changes_columns(
        output, table, ignore_new_columns=config.ignore_new_columns
    )


def _check_fits(
    decoder: object,
    row: DecodedRow,
    record: Record,
    config: ReadConfig,
    output: TableSchema,
    changes: Changes | None = None,
) -> None:
    topic = config.topic
    lookup = getattr(decoder, "table", None)
    table = lookup(row.database, row.table, row.schema_version) if lookup else None
    if table is None:
        raise _incomplete(row, record, topic)
    if config.ignore_new_columns and adds_columns_only(output, table):
        return  # the builder takes the output's columns only
    if changes is not None and not same_columns(table, output):
        changes(table, config.topic, record)
    if not same_columns(table, output):
        raise SchemaError(
            f"topic {topic} partition {record.partition} offset {record.offset}: "
            f"{row.database}.{row.table} schema version {row.schema_version} has columns "
            f"({', '.join(table.column_names)}), not the read's "
            f"{output.database}.{output.table} ({', '.join(output.column_names)}); pick one "
            "table with options database and table, or read the offsets before and after "
            "the schema change separately (startingOffsets, endingOffsets)"
        )


def _check_names(
    row: DecodedRow, record: Record, config: ReadConfig, output: TableSchema, names: set[str]
) -> None:
    topic = config.topic
    image = row.old if row.data is None else row.data
    if image is None:
        return
    # An avro DELETE (a tombstone) carries the key columns only; the builder takes the
    # output's columns only, so new columns pass under ignore-new-columns.
    if row.op is Op.DELETE:
        fits = image.keys() <= names
    elif config.ignore_new_columns:
        fits = image.keys() >= names
    else:
        fits = image.keys() == names
    if not fits:
        raise SchemaError(
            f"topic {topic} partition {record.partition} offset {record.offset}: "
            f"{row.op.value} {row.database}.{row.table} has columns ({', '.join(image)}), "
            f"not the read's {output.database}.{output.table} "
            f"({', '.join(output.column_names)}); pick one table with options database and "
            "table, or read the offsets before and after the schema change separately "
            "(startingOffsets, endingOffsets)"
        )


def _incomplete(
    row: DecodedRow, record: Record, topic: str, *, versioned: bool = True
) -> DecodeError:
    where = f"topic {topic} partition {record.partition} offset {record.offset}"
    if row.claim_check_location:
        return DecodeError(
            f"{where}: {row.op.value} {row.database}.{row.table} is stored in claim-check "
            f"file {mask_uri(row.claim_check_location)}; set option claim-check-storage-uri to the "
            "writer's to read it"
        )
    if row.handle_key_only:
        return DecodeError(
            f"{where}: {row.op.value} {row.database}.{row.table} carries only its handle "
            "key (written with large-message-handle-option=handle-key-only); the full row "
            "is not in the topic"
        )
    if not versioned:  # debezium written without its schema part
        return DecodeError(
            f"{where}: {row.op.value} {row.database}.{row.table} carries no field schemas "
            "(written with debezium-disable-schema=true), so its values cannot be typed; "
            "read a topic written with the schema part"
        )
    return DecodeError(
        f"{where}: no schema of {row.database}.{row.table} version {row.schema_version} "
        "came before this row (Simple sends one in BOOTSTRAP and DDL messages before a "
        "table's rows); set option startingOffsets to an offset before the schema message, "
        "or past the rows of that version if it is gone"
    )
