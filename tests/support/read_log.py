"""Topics in memory for the reader's unit tests, standing in for `ticdc_sink.read.consumer.
TopicLog` (the same `topics()` / `bounds(topic)` / `all_bounds(topics)` /
`offsets_for_times(timestamps)` / `read(range)` / `close()`), and messages of Simple
(`simple_messages`) or of any protocol (`protocol_messages`) to fill them.

| behaviour | FakeTopicLog |
| --- | --- |
| topics | `FakeTopicLog({partition: entries})`: topic `t`; `of_topics({topic: {...}})` |
| records | a value (no key), or a (key, value) pair, per offset |
| `topics()` | the topic names, sorted |
| `bounds(topic)` | (low, number of records) per partition of `topic` (None: `t`); |
|  | low is 0 unless `lows` says otherwise (messages deleted by retention) |
| a topic it lacks | `bounds` raises `DeliveryError` |
| `read(range)` | the records with start <= offset < end, in offset order; one read at |
|  | a time, as TopicLog's one consumer (a read begun during another fails) |
| `read_chunks(range)` | `read`'s records as lists of `chunk` records (the last one fewer), |
|  | as TopicLog's consume calls give them; `chunk` is 500 unless set |
| `fork()` | a log over the same records whose reads are its own (`TopicLog.fork`) |
| `offsets_for_times` | the first kept offset whose record's timestamp is at or after |
|  | the one asked (records without a timestamp never match); None: none is |
| `times_asked` | every offsets_for_times request, in order |
| `reads` | every range read, in order (what the driver scanned) |
| `records` | (topic, partition) -> records; add a key to add a partition or topic, |
|  | replace its records to recreate it, delete it to delete it |
| `lows` | (topic, partition) -> its first offset kept (default 0) |

`simple_stream` writes a partition's messages one by one (rows and watermarks in any
order), for the streaming reader's tests.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ticdc_sink.codec.protocols import build_batcher, build_encoder, encode_watermark
from ticdc_sink.config import CodecConfig
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import DeliveryError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.record import Record
from ticdc_sink.schema import Column, Index, TableSchema

__all__ = [
    "WATERMARK",
    "FakeTopicLog",
    "protocol_messages",
    "records",
    "simple_messages",
    "simple_stream",
    "table",
]

Entry = bytes | None | tuple[bytes | None, bytes | None]


def records(partition: int, entries: list[Entry]) -> list[Record]:
    """A partition's records, one per entry, from offset 0."""
    return [_record(partition, offset, entry) for offset, entry in enumerate(entries)]


def _record(partition: int, offset: int, entry: Entry) -> Record:
    key, value = entry if isinstance(entry, tuple) else (None, entry)
    return Record(partition, offset, key, value, None)


#: `simple_stream`'s item kind for a watermark: (WATERMARK, ts).
WATERMARK = "watermark"


class FakeTopicLog:
    def __init__(self, partitions: dict[int, list[Entry]]) -> None:
        self.records = {("t", p): records(p, entries) for p, entries in partitions.items()}
        self.lows: dict[tuple[str, int], int] = {}
        self.reads: list[OffsetRange] = []
        self.times_asked: list[dict[tuple[str, int], int]] = []
        self.chunk = 500
        self._reading = False

    @classmethod
    def of_topics(cls, topics: dict[str, dict[int, list[Entry]]]) -> FakeTopicLog:
        log = cls({})
        log.records = {
            (t, p): records(p, entries)
            for t, partitions in topics.items()
            for p, entries in partitions.items()
        }
        return log

    def topics(self) -> list[str]:
        return sorted({t for t, _ in self.records})

    def bounds(self, topic: str | None = None) -> dict[int, tuple[int, int]]:
        topic = "t" if topic is None else topic
        found = {
            p: (self.lows.get((t, p), 0), len(r))
            for (t, p), r in self.records.items()
            if t == topic
        }
        if not found:
            raise DeliveryError(f"cannot read topic {topic}: no such topic")
        return found

    def all_bounds(self, topics: Collection[str]) -> dict[tuple[str, int], tuple[int, int]]:
        return {(t, p): b for t in topics for p, b in self.bounds(t).items()}

    def offsets_for_times(
        self, timestamps: Mapping[tuple[str, int], int]
    ) -> dict[tuple[str, int], int | None]:
        self.times_asked.append(dict(timestamps))
        found: dict[tuple[str, int], int | None] = {}
        for key, ts in timestamps.items():
            kept = self.records[key][self.lows.get(key, 0) :]
            found[key] = next(
                (r.offset for r in kept if r.timestamp is not None and r.timestamp >= ts), None
            )
        return found

    def read(self, offsets: OffsetRange) -> Iterator[Record]:
        with contextlib.closing(self.read_chunks(offsets)) as chunks:
            for chunk in chunks:
                yield from chunk

    def read_chunks(self, offsets: OffsetRange) -> Iterator[list[Record]]:
        # As TopicLog's one consumer: one read at a time (a read started during another
        # would take its assignment away); a second one at once needs `fork`.
        assert not self._reading, f"a read of {offsets} began while another was under way"
        self.reads.append(offsets)
        key = (offsets.topic, offsets.partition)
        start = max(offsets.start, self.lows.get(key, 0))
        found = self.records[key][start : offsets.end]
        self._reading = True
        try:
            for at in range(0, len(found), self.chunk):
                yield found[at : at + self.chunk]
        finally:
            self._reading = False

    def fork(self) -> FakeTopicLog:
        """A log over the same messages whose reads are its own (`TopicLog.fork`)."""
        forked = copy.copy(self)
        forked._reading = False
        return forked

    def close(self) -> None:
        pass


def table(
    name: str = "t",
    columns: dict[str, str] | None = None,
    *,
    database: str = "db",
    version: int = 1,
) -> TableSchema:
    """A table with primary key `id` (bigint) and `columns` (name -> MySQL type)."""
    types = {"id": "bigint", **(columns or {"name": "varchar(20)"})}
    return TableSchema(
        database,
        name,
        tuple(
            Column(n, parse_mysql_type(t), nullable=n != "id", column_id=i + 1)
            for i, (n, t) in enumerate(types.items())
        ),
        (Index("PRIMARY", ("id",), unique=True, primary=True),),
        table_id=7,
        version=version,
    )


def simple_messages(
    schema: TableSchema,
    changes: list[tuple[Op, int, tuple | None, tuple | None]],
    *,
    bootstrap: bool = True,
    watermark: int | None = None,
    codec: CodecConfig | None = None,
) -> list[bytes | None]:
    """Simple values (JSON, or as `codec` says): a BOOTSTRAP, one message per (op, commit
    ts, row, before), then a WATERMARK."""
    codec = codec or CodecConfig()
    encoder = build_encoder(codec, schema, build_ts_ms=1)
    values: list[bytes | None] = []
    if bootstrap:
        message = encoder.encode_bootstrap()
        assert message is not None
        values.append(message.value)
    for op, commit_ts, row, before in changes:
        values.append(encoder.encode_row(RowChange(schema, op, commit_ts, row, before)).value)
    if watermark is not None:
        mark = encode_watermark(codec, watermark, build_ts_ms=1)
        assert mark is not None
        values.append(mark.value)
    return values


def protocol_messages(
    config: CodecConfig,
    schema: TableSchema,
    changes: list[tuple[Op, int, tuple | None, tuple | None]],
    *,
    watermark: int | None = None,
    registry: Any = None,
) -> list[tuple[bytes | None, bytes | None]]:
    """The (key, value) records `config.protocol` writes for `changes` to one partition,
    then its watermark (if the protocol sends one): open-protocol's events batched as the
    writer batches them; `registry` gives avro its schema ids."""
    encoder = build_encoder(config, schema, build_ts_ms=1, topic="t", registry=registry)
    messages = [
        encoder.encode_row(RowChange(schema, op, commit_ts, row, before))
        for op, commit_ts, row, before in changes
    ]
    records = [(m.key, m.value) for m in messages]
    if watermark is not None:
        mark = encode_watermark(config, watermark, build_ts_ms=1)
        if mark is not None:
            records.append((mark.key, mark.value))
    batcher = build_batcher(config)
    if batcher is None:
        return records
    merged = [done for key, value in records if (done := batcher.add(key or b"", value or b""))]
    last = batcher.flush()
    return merged + ([last] if last else [])


def simple_stream(
    schema: TableSchema,
    items: list[tuple[str, int] | tuple[Op, int, tuple]],
    *,
    codec: CodecConfig | None = None,
) -> list[bytes | None]:
    """Simple values (JSON, or as `codec` says), one per item: `(WATERMARK, ts)`, or
    `(op, commit ts, row)` of `schema` (an UPDATE without its old row)."""
    codec = codec or CodecConfig()
    encoder = build_encoder(codec, schema, build_ts_ms=1)
    values: list[bytes | None] = []
    for item in items:
        if item[0] == WATERMARK:
            mark = encode_watermark(codec, item[1], build_ts_ms=1)
            assert mark is not None
            values.append(mark.value)
        else:
            op, commit_ts, row = item  # type: ignore[misc]
            values.append(encoder.encode_row(RowChange(schema, op, commit_ts, row, None)).value)
    return values
