"""Streaming reads: where each micro-batch ends, planned on the driver.

A stream offset is Spark's Kafka source's `{topic: {partition: offset}}`, one entry per
topic read, plus, under the key `ticdc:resolved-ts` (no topic name has a colon), each
partition's resolved ts before that offset, `{topic: {partition: ts}}`. Spark checkpoints
it, so a task that starts mid-partition, after a restart too, knows the last watermark
before its range (`replay.ReplayFilter`).

The driver scans the topics itself (`StreamScan`), once per message: it remembers, per
partition of every topic, the resolved ts and the row counts after each watermark and
row, and where a selected table's schema changes. It decodes whole only the messages that
are not rows (watermarks, DDL, BOOTSTRAP) and the rows a protocol's peek is unsure of;
other rows are read by the peek (`decode.peek`: table, commit ts, schema version), their
values left to the tasks. It reads as far as the next micro-batch needs: everything there
is, or under `maxOffsetsPerTrigger` each partition's share of the limit and on where the
next watermark cut needs it (`StreamScan.plan`), so what it remembers (32 bytes a
message, until the batch holding it commits) is about one micro-batch, not a backlog.
With `driver-scan=watermarks` it reads no row: under watermark consistency it reads each
partition back from its end, in chunks, only to the watermarks placing the cut needs
(`StreamScan._tail_cut`; under a limit, forward through the limit's share, rows skipped),
so its work does not grow with the batch; under `consistency=none` back to the last
watermark before each cut (the replay rule's resolved ts), or nothing. It counts no rows
(`Cut.rows` is None), every range gets a task, and the tasks see schema changes
(`refuse_changes`). From that (either way):

- `consistency=watermark`: `plan_watermark_cut` ends a micro-batch, in every partition,
  just after the last watermark whose ts is at or below the smallest resolved ts of all
  partitions of all topics (a watermark that raised the partition's resolved ts: a
  replayed one does not end a batch). TiCDC (and this sink) sends every watermark to every
  partition of every topic, so the batch holds exactly the rows with commit ts up to that
  ts, in every topic. `maxOffsetsPerTrigger` is soft: the largest such cut within the
  limit, else the smallest one past it.
- `consistency=none`: `plan_offsets_cut` reads as far as the data goes, a limit shared
  across partitions in proportion to what each has, as Spark's Kafka source does.
- `minOffsetsPerTrigger` (`TriggerDelay`): a micro-batch waits while fewer new offsets are
  there, up to `maxTriggerDelay` since the last one, as Spark's Kafka source waits; under
  watermark consistency the batch then still ends at a watermark.
- `minPartitions`: a micro-batch's ranges are cut into parts just after watermarks the
  scan met, or under `consistency=none` anywhere with the resolved ts there (`parts`,
  `split`).
- A range or part in which the scan counted no row (watermarks and schema messages only:
  an idle partition) gets no task (`parts`), and small ones are packed into tasks of up to
  `offsets-per-task` offsets (`tasks`), so a topic of many partitions costs a micro-batch
  a few tasks, not one per partition.

Which partitions carry watermarks: every partition of a topic TiCDC writes, or those below
its `partition-num` (TiCDC writes nothing to the others); debezium and canal-json only with
`enable-tidb-extension=true`, avro never (`check_consistency` refuses a stream that would
wait for watermarks that never come). Partitions from `partition-num` on do not hold a
watermark cut back and are read as far as their data goes; a partition that holds the
stream back without ever having had a watermark while the others pass several is logged
at once (`held_back`), naming the options to set.

Partitions come and go: `follow_partitions` adds a partition created after the query
started (and, under `topicPattern`, each partition of a topic created since that
matches) at its earliest offset, as Spark's Kafka source does (`ranges` starts it there
when Spark's start offset predates it). Offsets the stream was to read that are gone (a
partition or topic deleted, a topic recreated so that its offsets went back below the
stream's, messages deleted by retention) fail the query with an error naming topic,
partition and offsets, as Spark's Kafka source does under `failOnDataLoss=true`; with
`failOnDataLoss=false` they are logged (WARNING) and the stream reads on from what is
there (a recreated topic from its earliest offset). A checkpoint whose topics this query
does not read is an error naming both.

The planning functions are pure; `StreamScan` reads through `TopicLog`. Nothing of Spark.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import math
import time
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs
import orjson

from ticdc_sink.codec.protocols import find_protocol
from ticdc_sink.codec.spec import Watermark
from ticdc_sink.decode import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    DecodedWatermark,
)
from ticdc_sink.decode.peek import RowPeek
from ticdc_sink.errors import ConfigError, DeliveryError, SchemaError, TiCDCSinkError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import MAX_COMMIT_TS, BadMessages, decode_events, new_decoder
from ticdc_sink.read.discover import is_selected
from ticdc_sink.read.evolution import adds_columns_only, changes_columns, describe_change
from ticdc_sink.read.offsets import (
    Bounds,
    OffsetRange,
    OffsetSpec,
    TopicPartition,
    plan_ranges,
    starting_spec,
)
from ticdc_sink.read.options import ReadConfig, select_topics
from ticdc_sink.read.record import Record
from ticdc_sink.read.replay import ReplayFilter, RowKeys
from ticdc_sink.read.split import Part, Task, pack_parts, split_ranges
from ticdc_sink.schema import TableSchema

__all__ = [
    "RESOLVED_KEY",
    "Cut",
    "PartitionIndex",
    "StreamOffset",
    "StreamScan",
    "TriggerDelay",
    "check_consistency",
    "describe_cut",
    "follow_partitions",
    "held_back",
    "log_cut",
    "plan_offsets_cut",
    "plan_start",
    "plan_watermark_cut",
    "refuse_changes",
]

RESOLVED_KEY = "ticdc:resolved-ts"

logger = logging.getLogger(__name__)

#: The offsets a back-scan (`driver-scan=watermarks`) reads first, then half as many again
#: each time: it reads at most about 1.5 times as far back as the watermark it looks for
#: (doubling read up to twice as far: 17% of a 10,000-row batch where 9% was needed), in a
#: few more requests of a millisecond or two each.
TAIL_STEP = 64

#: Distinct watermarks the other partitions pass while a partition that never had one
#: holds the stream back, before the driver says so: TiCDC sends each watermark to every
#: partition it writes, so after two a partition without any is not one of them.
HELD_BACK_AFTER = 2


@attrs.frozen
class StreamOffset:
    """A micro-batch boundary: each partition's next offset and its resolved ts before it
    (0: none known, as at a start from `startingOffsets`), keyed by (topic, partition)."""

    offsets: dict[TopicPartition, int]
    resolved: dict[TopicPartition, int]

    def to_json(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        resolved: dict[str, dict[str, int]] = {}
        for (topic, p), offset in sorted(self.offsets.items()):
            out.setdefault(topic, {})[str(p)] = offset
            resolved.setdefault(topic, {})[str(p)] = self.resolved.get((topic, p), 0)
        out[RESOLVED_KEY] = resolved
        return out

    def kafka_json(self) -> dict[str, dict[str, int]]:
        """The offsets alone, as Spark's Kafka source's startingOffsets spells them."""
        return {t: v for t, v in self.to_json().items() if t != RESOLVED_KEY}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> StreamOffset:
        """Raises:
        ConfigError: the offset is not this source's (a checkpoint of another query).
        """
        resolved = value.get(RESOLVED_KEY)
        topics = {t: o for t, o in value.items() if t != RESOLVED_KEY}
        shaped = isinstance(resolved, dict) and all(
            isinstance(o, dict) and isinstance(resolved.get(t, {}), dict) for t, o in topics.items()
        )
        if not shaped or not topics:
            raise ConfigError(
                f"the stream's offset {dict(value)} is not one of this source's: the "
                "checkpoint is another query's; give this query its own checkpointLocation",
                option="checkpointLocation",
            )
        assert isinstance(resolved, dict)
        offsets = {(t, int(p)): int(o) for t, of in topics.items() for p, o in of.items()}
        return cls(
            offsets,
            {(t, p): int(resolved.get(t, {}).get(str(p), 0)) for t, p in offsets},
        )

    def size_to(self, end: StreamOffset) -> int:
        return sum(end.offsets[p] - o for p, o in self.offsets.items())


def plan_start(bounds: Bounds, spec: OffsetSpec, option: str = "startingOffsets") -> StreamOffset:
    """A stream's first offset: `spec` (`offsets.starting_spec`, from `option`) resolved
    against every partition of `bounds`."""
    ranges = plan_ranges(bounds, spec, "latest", options=(option, "endingOffsets"))
    offsets = {(r.topic, r.partition): r.start for r in ranges}
    return StreamOffset(offsets, dict.fromkeys(offsets, 0))


def follow_partitions(
    start: StreamOffset,
    bounds: Bounds,
    *,
    fail_on_data_loss: bool = True,
    existing: Collection[str] = (),
    reading: str = "",
) -> tuple[StreamOffset, list[str]]:
    """`start` against the partitions there are now (`bounds`), and what was lost.

    Every partition of `bounds` that `start` lacks joins at its earliest offset (a
    partition or topic created since; Spark's Kafka source reads those from the earliest
    offset too). Offsets of `start` that are gone are data loss: a partition that is gone
    (`existing`, the brokers' topics, tells a deleted topic from one this query does not
    read, `reading` naming what it reads), one whose end is below the stream's offset (its
    topic was deleted and recreated, or its log truncated), one whose first offset is past
    the stream's (its messages were deleted before they were read). With
    `fail_on_data_loss` the first is raised; else each is returned as a warning's text and
    the stream reads on from what is there: a gone partition is dropped, a recreated one
    starts again at its earliest offset (resolved ts 0), a truncated one at its first
    offset kept.

    Raises:
        ConfigError: the checkpoint holds a topic this query does not read.
        DeliveryError: offsets the stream was to read are gone.
    """
    offsets, resolved = dict(start.offsets), dict(start.resolved)
    lost: list[str] = []

    def loss(error: Callable[[str], TiCDCSinkError], what: str, fix: str, instead: str) -> None:
        if fail_on_data_loss:
            raise error(
                f"{what}; {fix}, or set option failOnDataLoss=false to read on from what is "
                "there (as Spark's Kafka source)"
            )
        lost.append(f"{what}; failOnDataLoss=false: {instead}")

    restart = "start a new query (a new checkpointLocation) to read on from the topics there are"
    gone = sorted(set(start.offsets) - set(bounds))
    read_now = {t for t, _ in bounds}
    unread = sorted({t for t, _ in gone if t in existing and t not in read_now})
    if unread:
        ours = sorted({t for t, _ in start.offsets})
        loss(
            functools.partial(ConfigError, option="checkpointLocation"),
            f"the stream's checkpoint belongs to a query of other topics: it holds offsets "
            f"of {_topics(ours)}, and this query reads {reading or _topics(sorted(read_now))}, "
            f"not {_topics(unread)} (which the brokers have)",
            f"give this query its own checkpointLocation, or read {_topics(unread)} again",
            f"{_topics(unread)} no longer read",
        )
    for key in gone:
        topic, partition = key
        offset = offsets.pop(key)
        resolved.pop(key, None)
        if topic not in unread:
            loss(
                DeliveryError,
                f"partition {partition} of topic {topic} is gone from the brokers (the topic "
                "was deleted, or has fewer partitions now) while the stream was at offset "
                f"{offset}; its unread messages are lost",
                restart,
                "the partition is no longer read",
            )
    for key, offset in sorted(start.offsets.items()):
        if key not in bounds:
            continue
        topic, partition = key
        low, high = bounds[key]
        if offset > high:
            loss(
                DeliveryError,
                f"partition {partition} of topic {topic} ends at offset {high}, below the "
                f"stream's offset {offset}: the topic was deleted and recreated (or its log "
                f"truncated), and the stream would skip the new messages before offset "
                f"{offset}",
                restart,
                f"reading it again from its earliest offset, {low}",
            )
            offsets[key], resolved[key] = low, 0
        elif offset < low:
            loss(
                DeliveryError,
                f"partition {partition} of topic {topic} begins at offset {low}, past the "
                f"stream's offset {offset}: offsets {offset}..{low - 1} were deleted "
                "(retention) before the stream read them",
                restart,
                f"reading on from offset {low}",
            )
            offsets[key] = low
    for key in sorted(set(bounds) - set(start.offsets)):
        offsets[key], resolved[key] = bounds[key][0], 0
    if offsets == start.offsets and resolved == start.resolved:
        return start, lost
    return StreamOffset(offsets, resolved), lost


def _topics(names: list[str]) -> str:
    return f"topic{'s' if len(names) > 1 else ''} {', '.join(names)}"


def check_consistency(config: ReadConfig) -> None:
    """Refuse a stream under `consistency=watermark` of a topic whose protocol, as the
    options say the writer configured it, carries no watermarks (it would never move):
    avro, and debezium or canal-json without `enable-tidb-extension`, or debezium under
    `ticdc-version=8.5` (tiflow v8.5's encoder sends none; pingcap/ticdc v26.3's does).

    Raises:
        ConfigError: naming the protocol, the writer's option that adds watermarks, and
            consistency=none.
    """
    if not config.watermark_consistency or config.carries_watermarks:
        return  # an unknown protocol "carries" them: it is refused elsewhere
    spec = find_protocol(config.protocol)
    assert spec is not None  # carries_watermarks is True without one
    watermark = spec.watermark_in(config.ticdc_version)
    if watermark is Watermark.WITH_TIDB_EXTENSION:
        why = (
            f"protocol {spec.name} carries watermarks only when the writer sets "
            f"enable-tidb-extension=true (TiCDC's {spec.name} encoder sends none without it), "
            "and option enable-tidb-extension is false here"
        )
        fix = (
            "set option consistency=none to stream the topic without transaction boundaries, "
            "or enable-tidb-extension=true if the writer set it (the writer's sink-uri or "
            "config sets it too)"
        )
    elif spec.watermark is not Watermark.NEVER:
        since = spec.events_since.value
        why = (
            f"protocol {spec.name} carries watermarks from TiCDC v{since} on and option "
            f"ticdc-version is {config.ticdc_version.value} (TiCDC v"
            f"{config.ticdc_version.value}'s {spec.name} encoder sends none)"
        )
        fix = (
            "set option consistency=none to stream the topic without transaction boundaries, "
            f"or ticdc-version={since} (with enable-tidb-extension=true) if the writer wrote "
            "that"
        )
    else:
        why = (
            f"protocol {spec.name} carries no watermarks (TiCDC sends avro watermarks only in "
            "its testing mode avro-enable-watermark, which this reader does not decode)"
        )
        fix = "set option consistency=none to stream the topic without transaction boundaries"
    raise ConfigError(
        f"option consistency is watermark (the default) but {why}: every micro-batch would "
        f"wait for a watermark that never comes; {fix}",
        option="consistency",
        value="watermark",
        allowed=("none",),
    )


def held_back(
    start: StreamOffset,
    index: Mapping[TopicPartition, PartitionIndex],
    free: Collection[TopicPartition] = (),
) -> list[TopicPartition]:
    """The partitions that have had no watermark since the stream started (from `start`
    on, and none before it) while the others passed `HELD_BACK_AFTER` distinct ones: under
    watermark consistency each holds every micro-batch back. `free` partitions carry no
    watermarks (from partition-num on) and are left out."""
    keys = [key for key in start.offsets if key not in free]
    silent = [k for k in keys if not start.resolved.get(k) and not index[k].marks(start.offsets[k])]
    passed = {ts for k in keys for _, ts in index[k].marks(start.offsets[k])}
    return sorted(silent) if len(passed) >= HELD_BACK_AFTER else []


@attrs.frozen
class Cut:
    """A planned micro-batch: where it ends, its resolved ts (watermark consistency), and
    the rows it holds and drops as replays (as the driver counted them; None under
    `driver-scan=watermarks`, whose driver does not read the rows); the messages the
    driver read to plan it, and of those the ones it decoded whole (`StreamScan`)."""

    end: StreamOffset
    resolved_ts: int | None
    rows: int | None
    dropped: int | None
    fetched: int = 0
    decoded: int = 0


def describe_cut(cut: Cut, start: StreamOffset, *, keep_replays: bool) -> str:
    """What the micro-batch from `start` to `cut` holds, as the driver's log says it: its
    rows and replays, or (`driver-scan=watermarks`, rows not read) its offsets."""
    if cut.rows is None or cut.dropped is None:
        return (
            f"{start.size_to(cut.end)} offsets (rows not counted: driver-scan=watermarks "
            "reads no row)"
        )
    kept = "kept (replays=keep)" if keep_replays else "dropped"
    return f"{cut.rows} rows, {cut.dropped} replayed rows {kept}"


class PartitionIndex:
    """What the driver knows of one partition from offset `base` on: after each watermark
    and each row of a selected table it scanned, the partition's resolved ts and the rows
    admitted and dropped so far; and the offset of a schema change that stops the stream
    (`change_at`). Memory: four integers per row and watermark scanned (under a limit,
    about one micro-batch's), pruned as batches commit."""

    def __init__(self, base: int, resolved_ts: int, *, identical: bool = False) -> None:
        self.base = base
        self.scanned = base
        self.replays = ReplayFilter(resolved_ts, identical=identical)
        self._base_state = (resolved_ts, 0, 0)
        self._offsets = array("q")
        self._resolved = array("q")
        self._rows = array("q")
        self._dropped = array("q")
        self._marks: list[int] = []  # offsets of the watermarks
        self.change_at: int | None = None
        self.change: TableSchema | None = None

    def see_watermark(self, offset: int, watermark: DecodedWatermark) -> None:
        if self.replays.see_watermark(watermark):
            self._marks.append(offset)
        self._note(offset)

    def see_row(self, offset: int, row: DecodedRow | RowPeek, *, keyed: bool = False) -> None:
        self.replays.admit(row, keyed=keyed)
        self._note(offset)

    def _note(self, offset: int) -> None:
        self._offsets.append(offset)
        self._resolved.append(self.replays.resolved_ts)
        self._rows.append(self.replays.rows)
        self._dropped.append(self.replays.dropped)

    def stop_at(self, offset: int, table: TableSchema) -> None:
        """The table's columns change at `offset` to `table`'s: batches end before it."""
        self.change_at = self.scanned = offset
        self.change = table

    def state_at(self, offset: int) -> tuple[int, int, int]:
        """(resolved ts, rows, dropped) before `offset`."""
        i = bisect.bisect_left(self._offsets, offset) - 1
        if i < 0:
            return self._base_state
        return self._resolved[i], self._rows[i], self._dropped[i]

    def readable_end(self) -> int:
        """How far a batch may read: to the scanned end, or the schema change."""
        return self.change_at if self.change_at is not None else self.scanned

    def marks(self, start: int) -> list[tuple[int, int]]:
        """(offset just after it, resolved ts) of each watermark from `start` on that
        raised the resolved ts, before a schema change."""
        stop = self.readable_end()
        first = bisect.bisect_left(self._marks, start)
        last = bisect.bisect_left(self._marks, stop)
        return [(m + 1, self.state_at(m + 1)[0]) for m in self._marks[first:last]]

    def forget_before(self, offset: int) -> None:
        """Drop what lies before `offset` (a committed micro-batch's end)."""
        if offset <= self.base:
            return
        self._base_state = self.state_at(offset)
        i = bisect.bisect_left(self._offsets, offset)
        for values in (self._offsets, self._resolved, self._rows, self._dropped):
            del values[:i]
        del self._marks[: bisect.bisect_left(self._marks, offset)]
        self.base = offset


def plan_watermark_cut(
    start: StreamOffset,
    index: Mapping[TopicPartition, PartitionIndex],
    limit: int | None,
    free: Collection[TopicPartition] = (),
) -> tuple[StreamOffset, int | None]:
    """The end of the next micro-batch at a watermark, and its resolved ts; `start` itself
    and None when no partition can move.

    Every partition ends just after its last watermark at or below a ts T, with T at most
    the smallest resolved ts across partitions; T is the largest such ts whose batch holds
    at most `limit` offsets, else the smallest ts that moves at all (a transaction larger
    than the limit extends the batch rather than stalling it). Each candidate T is a
    watermark after the start, so every candidate moves; the sizes grow with T, so the
    limit is found by bisection (a backlog holds many watermarks). `free` partitions
    carry no watermarks (from the writer's partition-num on): they do not bound T, and a
    batch that moves reads them as far as they were scanned.
    """
    marks = {key: index[key].marks(o) for key, o in start.offsets.items() if key not in free}
    free_ends = {key: index[key].readable_end() for key in free if key in start.offsets}
    tops = [m[-1][1] if m else start.resolved.get(p, 0) for p, m in marks.items()]
    ceiling = min(tops, default=0)
    candidates = sorted({ts for m in marks.values() for _, ts in m if ts <= ceiling})
    if not candidates:
        return start, None
    resolved = {p: [ts for _, ts in m] for p, m in marks.items()}  # rising: marks raise it

    def cut_at(ts: int) -> StreamOffset:
        offsets, carried = dict(start.offsets), dict(start.resolved)
        for p, found in marks.items():
            i = bisect.bisect_right(resolved[p], ts)
            if i:
                offsets[p], carried[p] = found[i - 1]
        for p, end in free_ends.items():
            offsets[p], carried[p] = end, index[p].state_at(end)[0]
        return StreamOffset(offsets, carried)

    if limit is None:
        return cut_at(candidates[-1]), candidates[-1]
    low, high = 0, len(candidates)  # the first candidate whose batch is above the limit
    while low < high:
        middle = (low + high) // 2
        if start.size_to(cut_at(candidates[middle])) <= limit:
            low = middle + 1
        else:
            high = middle
    ts = candidates[max(low - 1, 0)]
    return cut_at(ts), ts


def plan_offsets_cut(
    start: StreamOffset, ends: Mapping[TopicPartition, int], limit: int | None
) -> dict[TopicPartition, int]:
    """Each partition's end under `consistency=none`: as far as `ends`, with at most
    `limit` offsets shared in proportion to what each partition has (Spark's
    `KafkaMicroBatchStream.rateLimit`: a share below one offset rounds up, others down)."""
    sizes = {p: max(ends[p] - o, 0) for p, o in start.offsets.items()}
    total = sum(sizes.values())
    if limit is None or total <= limit:
        return {p: start.offsets[p] + size for p, size in sizes.items()}
    out = {}
    for p, size in sizes.items():
        share = limit * (size / total)
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[p] = start.offsets[p] + min(size, step)
    return out


class TriggerDelay:
    """`minOffsetsPerTrigger` with `maxTriggerDelay`, as Spark's Kafka source
    (`KafkaMicroBatchStream.delayBatch`): a micro-batch waits while fewer than
    `min_offsets` new offsets are there, until `max_delay_s` passed since the last
    trigger. The first call triggers and starts the clock, as Spark's; a micro-batch
    that moves restarts it. `clock` gives seconds (monotonic)."""

    def __init__(
        self, min_offsets: int, max_delay_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.min_offsets = min_offsets
        self.max_delay_s = max_delay_s
        self.clock = clock
        self._last: float | None = None

    def holds(self, available: int) -> bool:
        """Whether the micro-batch waits, with `available` new offsets there."""
        now = self.clock()
        if self._last is None:
            self._last = now
            return False
        if now - self._last >= self.max_delay_s:
            return False
        return available < self.min_offsets

    def moved(self) -> None:
        """A micro-batch was planned: the wait starts again."""
        self._last = self.clock()


class StreamScan:
    """The driver's scan of a stream's topics: reads each message once, from the first
    micro-batch's start on, as far as the next micro-batch needs, and plans micro-batches.

    A row message is read by the decoder's peek (`decode.peek`) where the protocol has
    one: its table, commit ts and schema version, its values left to the tasks. It is
    decoded whole when the peek is unsure, or when the replay rule must compare its values
    and the peek does not give them (a keyed table under consistency=watermark); every
    other message (watermark, DDL, BOOTSTRAP) is decoded whole. `fetched` and `decoded`
    count the messages read and decoded whole since the scan began.

    Not thread-safe; Spark calls a stream reader from one thread. Close it to free the
    consumer.
    """

    def __init__(
        self,
        config: ReadConfig,
        table: TableSchema,
        known: tuple[TableSchema, ...],
        log: TopicLog,
    ) -> None:
        self.config = config
        self.table = table
        self.log = log
        self._decoder = new_decoder(config, known)
        # Skipped here without a report: the tasks meet the same messages and report them.
        self._skipped = BadMessages() if config.skip_bad_messages else None
        self.index: dict[TopicPartition, PartitionIndex] = {}
        self._tables: dict[tuple[str, str, int], TableSchema] = {
            (t.database, t.table, t.version): t for t in known
        }
        # partitions whose schemas were read from the start
        self._history: set[TopicPartition] = set()
        self._checked: set[tuple[str, str, int]] = set()  # row versions that fit
        self._keyed = RowKeys(self._decoder)
        self._peek: Callable[[bytes | None, bytes | None], RowPeek | None] | None = getattr(
            self._decoder, "peek_row", None
        )
        self.fetched = 0
        self.decoded = 0
        # What the back-scans read of each partition (`driver-scan=watermarks`).
        self._tails: dict[TopicPartition, _Tail] = {}
        self._warned: set[str] = set()  # each warning once per query
        #: Each partition's end when a micro-batch was last planned (`reportLatestOffset`).
        self.latest: dict[TopicPartition, int] = {}

    @property
    def tables(self) -> tuple[TableSchema, ...]:
        """Every table schema known: the discovered ones and those the scan met."""
        return tuple(self._tables.values())

    def bounds(self) -> dict[TopicPartition, tuple[int, int]]:
        """Every partition of the topics read now (`topicPattern` matched anew) with its
        (low, high) offsets.

        Raises:
            ConfigError: topicPattern matches no topic.
            DeliveryError: the brokers or a topic cannot be reached.
        """
        existing = self.log.topics() if self.config.topic_pattern else ()
        return self.log.all_bounds(select_topics(self.config, existing))

    def initial_offset(self) -> StreamOffset:
        """The stream's first offset (`startingOffsets`, default latest, or the timestamp
        options before it: `offsets.starting_spec`).

        Raises:
            ConfigError: a bad startingOffsets (or timestamp option), a starting timestamp
                no message is at or after, or topicPattern matches no topic.
            DeliveryError: the brokers or a topic cannot be reached.
        """
        bounds = self.bounds()
        topics = tuple(sorted({t for t, _ in bounds}))
        config = self.config
        spec = starting_spec(config, topics, bounds, self.log.offsets_for_times, default="latest")
        return plan_start(bounds, spec, config.starting_option)

    def next_cut(
        self,
        start: StreamOffset,
        target: Mapping[TopicPartition, int] | None,
        limit: int | None,
        wait: TriggerDelay | None = None,
    ) -> Cut:
        """The next micro-batch from `start`: up to `target` (Trigger.AvailableNow's end;
        a partition not in it is not read) or what the topics hold now; none (`start`)
        while `wait` holds the micro-batch for more offsets. Partitions that
        appeared since `start` (new ones, or topics that now match topicPattern) are read
        from their earliest offsets (`follow_partitions`); `ranges` starts them there.

        Raises:
            DeliveryError: offsets of `start` are gone (`follow_partitions`), or as `plan`.
            ConfigError: the checkpoint's topics are not this query's
                (`follow_partitions`), or as `bounds`.
            SchemaError, DecodeError: as `plan`.
        """
        bounds = self.bounds()
        self.latest = {k: hi for k, (_, hi) in bounds.items()}
        if target is None:
            ends = self.latest
            if wait is not None:
                available = sum(hi - start.offsets.get(k, lo) for k, (lo, hi) in bounds.items())
                if wait.holds(available):
                    return Cut(start, None, 0, 0)
            cut = self.plan(self._follow(start, bounds), ends, limit)
            if wait is not None and cut.end != start:
                wait.moved()
            return cut
        # An AvailableNow run reads the partitions there were when it began; those that
        # appear during it wait for the next run (else a watermark cut would wait for them).
        known = {key: b for key, b in bounds.items() if key in target or key in start.offsets}
        return self.plan(self._follow(start, known), target, limit)

    def ranges(self, start: StreamOffset, end: StreamOffset) -> list[tuple[OffsetRange, int]]:
        """The offset ranges of the micro-batch `start`..`end` with data, each with its
        partition's resolved ts before it. A partition in `end` and not in `start` joined
        the stream in this batch: it starts at its earliest offset, as Spark's Kafka
        source starts it (fetched again when a restart re-runs the batch). A partition of
        `start` that `end` lacks or puts below it lost offsets (`follow_partitions`: an
        error, or with failOnDataLoss=false a recreated one read from its earliest
        offset); Spark passes the start it recorded, which `next_cut` may have moved.

        Raises:
            DeliveryError, ConfigError: as `follow_partitions`.
        """
        moved = any(end.offsets.get(key, -1) < o for key, o in start.offsets.items())
        begin = start
        if moved or set(end.offsets) - set(start.offsets):
            begin = self._follow(start, self.bounds())
        out = []
        for key, offset in sorted(end.offsets.items()):
            first = begin.offsets.get(key, offset)
            offsets = OffsetRange(*key, min(first, offset), offset)
            if not offsets.empty:
                out.append((offsets, begin.resolved.get(key, 0)))
        return out

    def parts(self, start: StreamOffset, end: StreamOffset) -> list[Part]:
        """`ranges` cut into parts for `minPartitions` (`split.split_ranges`): each part
        starts just after a watermark the scan met that raised the resolved ts, where the
        replay rule needs nothing from before it (anywhere with replays=keep, or with the
        resolved ts there under consistency=none). A part the scan saw no row in (only
        watermarks and schema messages: TiCDC sends every watermark to every partition)
        gets no task, so an idle partition costs a stream nothing but the scan."""
        ranges = [r for r in self.ranges(start, end) if self._holds_rows(r[0])]
        boundaries = None
        if not self.config.keep_replays:
            boundaries = {
                (r.topic, r.partition): self.index[r.topic, r.partition].marks(r.start)
                for r, _ in ranges
                if (r.topic, r.partition) in self.index
            }
        anywhere = not self.config.watermark_consistency  # the resolved ts alone counts
        parts = split_ranges(ranges, self.config.min_partitions, boundaries, anywhere=anywhere)
        return [part for part in parts if self._holds_rows(part[0])]

    def tasks(self, start: StreamOffset, end: StreamOffset) -> list[Task]:
        """The micro-batch's Spark tasks: its `parts` packed by `offsets-per-task`
        (`split.pack_parts`), so a stream over many partitions with a few rows in each
        runs a few tasks, not one per partition."""
        config = self.config
        return pack_parts(self.parts(start, end), config.offsets_per_task, config.min_partitions)

    def _holds_rows(self, offsets: OffsetRange) -> bool:
        """Whether `offsets` may hold a row a task returns: the scan counted a row (kept or
        dropped as a replay) in it, or did not scan all of it. Under on-bad-message=skip
        every range is read, so that the task reports what it skips; under
        `driver-scan=watermarks`, which does not read the rows, every range too."""
        index = self.index.get((offsets.topic, offsets.partition))
        if self._skipped is not None or index is None or self.config.tail_scan:
            return True
        if not index.base <= offsets.start or offsets.end > index.scanned:
            return True
        _, rows_before, dropped_before = index.state_at(offsets.start)
        _, rows_after, dropped_after = index.state_at(offsets.end)
        return (rows_after, dropped_after) != (rows_before, dropped_before)

    def _follow(self, start: StreamOffset, bounds: Bounds) -> StreamOffset:
        """`follow_partitions` with this query's options, its warnings logged once, and
        the scan of a partition that starts over forgotten."""
        gone = {t for t, _ in start.offsets} - {t for t, _ in bounds}
        existing = self.log.topics() if gone else ()
        followed, lost = follow_partitions(
            start,
            bounds,
            fail_on_data_loss=self.config.fail_on_data_loss,
            existing=existing,
            reading=self.config.named_topics,
        )
        for text in lost:
            if text not in self._warned:
                self._warned.add(text)
                logger.warning("ticdc: %s", text)
        for key, offset in followed.offsets.items():
            if offset < start.offsets.get(key, offset):  # a recreated topic: start over
                self.index.pop(key, None)
                self._history.discard(key)
        return followed

    def cover(self, start: StreamOffset, end: StreamOffset) -> None:
        """Make sure the scan has read `start`..`end` (a micro-batch Spark re-runs after a
        restart is planned without `plan`), so `tables` holds its rows' schemas. Under
        `driver-scan=watermarks` the tasks meet the schemas themselves: nothing to read."""
        if self.config.tail_scan:
            return
        for offsets, resolved_ts in self.ranges(start, end):
            key = (offsets.topic, offsets.partition)
            self._scan(key, offsets.start, resolved_ts, offsets.end)

    def close(self) -> None:
        self.log.close()

    def plan(
        self, start: StreamOffset, ends: Mapping[TopicPartition, int], limit: int | None
    ) -> Cut:
        """The next micro-batch from `start`, reading at most to `ends` ((topic,
        partition) -> offset; what the topics hold now, or an availableNow target; a
        partition not in it stays where it is), and under `limit` only as far as placing
        the cut needs (`_watermark_cut`, `_offsets_cut`).

        Raises:
            SchemaError: a selected table's columns changed and the stream cannot move
                before the change (names the table, the change, and how to restart).
            DecodeError, DeliveryError: as reading the topic.
        """
        fetched, decoded = self.fetched, self.decoded
        ends = {key: ends.get(key, offset) for key, offset in start.offsets.items()}
        tail = self.config.tail_scan
        if self.config.watermark_consistency:
            free = self._free(start)
            if tail and limit is None:
                end, resolved_ts = self._tail_cut(start, ends, free)
            else:
                end, resolved_ts = self._watermark_cut(start, ends, limit, free)
            if end == start:
                self._warn_held_back(start, free)
        elif tail:
            offsets = plan_offsets_cut(start, ends, limit)
            end, resolved_ts = StreamOffset(offsets, self._resolved_at(start, offsets)), None
        else:
            offsets = self._offsets_cut(start, ends, limit)
            resolved = {p: self.index[p].state_at(o)[0] for p, o in offsets.items()}
            end, resolved_ts = StreamOffset(offsets, resolved), None
        if end == start:
            self._refuse_change(start)
        fetched, decoded = self.fetched - fetched, self.decoded - decoded
        if tail:
            logger.debug(
                "ticdc: driver scan (driver-scan=watermarks, rows not counted) for the "
                "micro-batch of %d offsets: %d messages read, %d decoded whole",
                start.size_to(end),
                fetched,
                decoded,
            )
            return Cut(end, resolved_ts, None, None, fetched, decoded)
        rows = dropped = 0
        for p, o in end.offsets.items():
            _, rows_end, dropped_end = self.index[p].state_at(o)
            _, rows_start, dropped_start = self.index[p].state_at(start.offsets[p])
            rows += rows_end - rows_start
            dropped += dropped_end - dropped_start
        logger.debug(
            "ticdc: driver scan for the micro-batch of %d rows: %d messages read, %d decoded whole",
            rows,
            fetched,
            decoded,
        )
        return Cut(end, resolved_ts, rows, dropped, fetched, decoded)

    def _tail_cut(
        self,
        start: StreamOffset,
        ends: Mapping[TopicPartition, int],
        free: Collection[TopicPartition],
    ) -> tuple[StreamOffset, int | None]:
        """`plan_watermark_cut` without a limit over the watermarks read back from each
        partition's end (`driver-scan=watermarks`), only as far as placing the cut needs:
        to a watermark in each partition (its resolved ts at the end), then, in each, to a
        watermark at or below the smallest of those (its cut is after the last such).

        The cut is the one a scan of everything places when each partition's watermarks
        rise in what the back-scan skips (TiCDC's do, but after a changefeed restart that
        re-sends older ones): the last watermark at or below a ts is then the last such
        one read back, and it raised the resolved ts. Those the back-scan reads are taken
        as a scan of everything takes them (a lower one raises nothing)."""
        tails = {
            key: self._tail(key, offset, ends[key])
            for key, offset in start.offsets.items()
            if key not in free
        }
        for key, found in tails.items():
            self._read_back(key, start.offsets[key], found, bool)
        tops = [
            max([start.resolved.get(k, 0), *(ts for _, ts in t.marks)]) for k, t in tails.items()
        ]
        ceiling = min(tops, default=0)
        for key, found in tails.items():
            self._read_back(
                key, start.offsets[key], found, lambda marks: any(ts <= ceiling for _, ts in marks)
            )
        views = {}
        for key in start.offsets:
            found = tails.get(key) or _Tail(ends[key], ends[key])
            view = PartitionIndex(found.lo, start.resolved.get(key, 0))
            for at, ts in found.marks:
                view.see_watermark(at, DecodedWatermark(ts))
            view.scanned = ends[key]
            views[key] = view
        self.index.update(views)
        return plan_watermark_cut(start, views, None, free)

    def _resolved_at(
        self, start: StreamOffset, offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        """Each partition's resolved ts before `offsets` (consistency=none under
        `driver-scan=watermarks`): its last watermark, read back from there, where the
        replay rule needs it (replays dropped, a writer that sends watermarks); else the
        start's, carried."""
        resolved = {key: start.resolved.get(key, 0) for key in offsets}
        if self.config.keep_replays or not self.config.carries_watermarks:
            return resolved
        for key, offset in offsets.items():
            found = self._tail(key, start.offsets[key], offset)
            self._read_back(key, start.offsets[key], found, bool)
            resolved[key] = max([resolved[key], *(ts for _, ts in found.marks)])
        return resolved

    def _tail(self, key: TopicPartition, start: int, end: int) -> _Tail:
        """The back-scan of `key` for `start`..`end`: what an earlier one read of it when
        that lies in there (from `start` on), else nothing read yet."""
        known = self._tails.get(key)
        if known is None or not start <= known.hi <= end:
            return _Tail(end, end)
        known.marks = [m for m in known.marks if m[0] >= start]
        known.lo = max(known.lo, start)
        return known if known.hi == end else _Tail(end, end, below=known)

    def _read_back(
        self,
        key: TopicPartition,
        start: int,
        found: _Tail,
        enough: Callable[[list[tuple[int, int]]], bool],
    ) -> None:
        """Read `key` back from `found.lo` in chunks (`TAIL_STEP` offsets, growing by half) until
        `enough` holds of the watermarks read, or to `start`; what an earlier back-scan
        read (`found.below`) is joined, not read again."""
        step = 0
        while not enough(found.marks) and found.lo > start:
            below = found.below
            if below is not None and below.hi == found.lo:
                found.lo, found.marks, found.below = below.lo, below.marks + found.marks, None
                continue
            step = step + step // 2 if step else TAIL_STEP
            low = max(below.hi if below is not None else start, found.lo - step)
            found.marks = self._watermarks(OffsetRange(*key, low, found.lo)) + found.marks
            found.lo = low
        found.below = None  # not reached: not needed by this plan, nor kept
        self._tails[key] = found

    def _watermarks(self, offsets: OffsetRange) -> list[tuple[int, int]]:
        """The watermarks in `offsets` (offset, ts); rows are peeked only to skip them,
        other messages decoded (the schema messages' tables learnt)."""
        out = []
        with contextlib.closing(self.log.read(offsets)) as records:
            for record in records:
                self.fetched += 1
                if self._peek is not None and self._peek(record.key, record.value) is not None:
                    continue
                self.decoded += 1
                for event in decode_events(self._decoder, record, offsets.topic, self._skipped):
                    if isinstance(event, DecodedWatermark):
                        out.append((record.offset, event.commit_ts))
                    else:
                        self._learn(event)
        return out

    def _scan_to(self, start: StreamOffset, reach: Mapping[TopicPartition, int]) -> None:
        for key, offset in start.offsets.items():
            self._scan(key, offset, start.resolved.get(key, 0), reach[key])

    def _watermark_cut(
        self,
        start: StreamOffset,
        ends: Mapping[TopicPartition, int],
        limit: int | None,
        free: Collection[TopicPartition],
    ) -> tuple[StreamOffset, int | None]:
        """`plan_watermark_cut` over a scan that reads, under a limit, only what placing
        the cut needs: first each partition's share of the limit (`plan_offsets_cut`),
        then, while the cut could still move further, on in the partitions that hold the
        smallest resolved ts down: by twice their mean distance between watermarks, then
        twice as far each round. The cut is the one a scan of everything would place (each
        watermark reaching every partition): past the partitions' reach lie only
        watermarks above their last one read, and a batch up to a larger ts than the one
        chosen is over the limit already, or needs a watermark the holders have not
        reached."""
        reach = dict(plan_offsets_cut(start, ends, limit))
        steps: dict[TopicPartition, int] = {}
        while True:
            self._scan_to(start, reach)
            end, ts = plan_watermark_cut(start, self.index, limit, free)
            if ts is not None and limit is not None and start.size_to(end) > limit:
                return end, ts  # the smallest cut is past the limit: no other moves less
            marks = {
                key: self.index[key].marks(offset)
                for key, offset in start.offsets.items()
                if key not in free
            }
            tops = {k: m[-1][1] if m else start.resolved.get(k, 0) for k, m in marks.items()}
            ceiling = min(tops.values(), default=0)
            if ts is not None and any(ts < t <= ceiling for m in marks.values() for _, t in m):
                return end, ts  # a larger cut was in reach, and over the limit
            holders = [
                key
                for key, top in tops.items()
                if top == ceiling
                and self.index[key].change_at is None
                and self.index[key].scanned < ends[key]
            ]
            if not holders:
                return end, ts
            for key in holders:
                # Twice the partition's mean distance between the watermarks read (as far
                # again, when none), then twice as far each time no watermark came.
                read = self.index[key].scanned - start.offsets[key]
                gap = read // len(marks[key]) if marks[key] else read // 2
                steps[key] = 2 * steps[key] if key in steps else max(2 * gap, 1)
                reach[key] = min(ends[key], self.index[key].scanned + steps[key])

    def _offsets_cut(
        self, start: StreamOffset, ends: Mapping[TopicPartition, int], limit: int | None
    ) -> dict[TopicPartition, int]:
        """`plan_offsets_cut` (consistency=none) up to each partition's schema change,
        scanning only each partition's share; a change found in it moves the shares, and
        the scan reads on."""
        while True:
            stops = {
                key: min(end, index.change_at)
                if (index := self.index.get(key)) is not None and index.change_at is not None
                else end
                for key, end in ends.items()
            }
            offsets = plan_offsets_cut(start, stops, limit)
            self._scan_to(start, offsets)
            if all(self.index[key].readable_end() >= o for key, o in offsets.items()):
                return offsets

    def forget_before(self, end: StreamOffset) -> None:
        """A micro-batch up to `end` committed: what lies before it is no longer needed."""
        for p, o in end.offsets.items():
            if p in self.index:
                self.index[p].forget_before(o)

    def _free(self, start: StreamOffset) -> set[TopicPartition]:
        """The partitions that carry no watermarks: from the writer's partition-num on."""
        limit = self.config.partition_num
        return set() if limit is None else {k for k in start.offsets if k[1] >= limit}

    def _warn_held_back(self, start: StreamOffset, free: set[TopicPartition]) -> None:
        """Say at once which partitions hold a watermark cut back (`held_back`), once
        each: the query waits on, and the user learns what to set."""
        for topic, partition in held_back(start, self.index, free):
            text = (
                f"partition {partition} of topic {topic} has had no watermark since the "
                "stream started while the other partitions passed "
                f"{HELD_BACK_AFTER} or more, so under consistency=watermark it holds every "
                "micro-batch back and the stream reads nothing. TiCDC sends watermarks to "
                "every partition it writes, which are those below its partition-num: set "
                "option partition-num to the writer's (or give its sink-uri), or "
                "consistency=none if the topic's writer sends no watermarks"
            )
            if text not in self._warned:
                self._warned.add(text)
                logger.warning("ticdc: %s", text)

    def _scan(self, key: TopicPartition, start: int, resolved_ts: int, end: int) -> None:
        index = self.index.get(key)
        if index is None or not index.base <= start <= index.scanned:
            index = self.index[key] = PartitionIndex(
                start, resolved_ts, identical=self.config.watermark_consistency
            )
        topic, partition = key
        while index.change_at is None and index.scanned < end:
            untyped = self._scan_range(key, index, end)
            if untyped is None:
                break
            # A row whose schema came before the scan: learn the schemas from the
            # partition's beginning (once), then read on from that row.
            self._history.add(key)
            low = self.log.bounds(topic)[partition][0]
            self._read(OffsetRange(topic, partition, low, index.base), None, end)

    def _scan_range(self, key: TopicPartition, index: PartitionIndex, end: int) -> int | None:
        """Read on to `end`; stop at a schema change, or at a row of an unknown schema
        version (its offset returned) when the partition's history is not read yet."""
        return self._read(OffsetRange(*key, index.scanned, end), index, end)

    def _read(self, offsets: OffsetRange, index: PartitionIndex | None, end: int) -> int | None:
        key = (offsets.topic, offsets.partition)
        with contextlib.closing(self.log.read(offsets)) as records:
            for record in records:
                self.fetched += 1
                peeked = self._peeked(record.key, record.value, index)
                events: Sequence[DecodedEvent | RowPeek]
                if peeked is None:
                    self.decoded += 1
                    events = decode_events(self._decoder, record, offsets.topic, self._skipped)
                elif index is None:
                    continue  # the history: schemas only, which no row holds
                else:
                    events = (peeked,)
                for event in events:
                    if index is None:
                        self._learn(event)
                    elif isinstance(event, DecodedWatermark):
                        index.see_watermark(record.offset, event)
                    elif self.config.tail_scan:  # rows are the tasks', and so are changes
                        self._learn(event)
                    elif isinstance(event, DecodedRow | RowPeek):
                        if not is_selected(self.config, event.database, event.table):
                            continue
                        if not event.typed and key not in self._history:
                            index.scanned = record.offset
                            return record.offset
                        changed = self._row_table(event)
                        if changed is not None:  # its schema came before the scan
                            index.stop_at(record.offset, changed)
                            return None
                        index.see_row(record.offset, event, keyed=self._keyed(event))
                    elif isinstance(event, DecodedBootstrap | DecodedDDL):
                        if event.table is not None and self._changes(event.table):
                            index.stop_at(record.offset, event.table)
                            return None
                        self._learn(event)
        if index is not None:
            index.scanned = end
        return None

    def _peeked(
        self, key: bytes | None, value: bytes | None, index: PartitionIndex | None
    ) -> RowPeek | None:
        """The row message `value` as the decoder's peek reads it, when that is all the
        scan needs of it; None: decode it whole (the peek is unsure, the commit ts is
        beyond what a read takes, or the identical-row rule must compare values the peek
        does not give)."""
        if self._peek is None:
            return None
        row = self._peek(key, value)
        if row is not None and self.config.tail_scan:
            return row  # skipped (driver-scan=watermarks): only its kind matters
        if row is None or row.commit_ts > MAX_COMMIT_TS:
            return None
        compares = index is not None and index.replays.identical and row.images is None
        if compares and is_selected(self.config, row.database, row.table) and self._keyed(row):
            return None
        return row

    def _row_table(self, row: DecodedRow | RowPeek) -> TableSchema | None:
        """The schema of `row` when its columns differ from the stream's (once per
        version)."""
        version = (row.database, row.table, row.schema_version)
        if version in self._checked:
            return None
        lookup = getattr(self._decoder, "table", None)
        table = lookup(*version) if lookup is not None else None
        if table is not None and self._changes(table):
            return table
        self._checked.add(version)
        return None

    def _learn(self, event: object) -> None:
        if isinstance(event, DecodedBootstrap | DecodedDDL) and event.table is not None:
            table = event.table
            self._tables[(table.database, table.table, table.version)] = table

    def _changes(self, table: TableSchema) -> bool:
        if not is_selected(self.config, table.database, table.table):
            return False
        return changes_columns(self.table, table, ignore_new_columns=self.config.ignore_new_columns)

    def _refuse_change(self, start: StreamOffset) -> None:
        changed = [(p, i) for p, i in sorted(self.index.items()) if i.change_at is not None]
        if not changed:
            return
        (topic, partition), index = changed[0]
        assert index.change is not None and index.change_at is not None
        where = (topic, partition, index.change_at)
        raise _change_error(
            self.table,
            index.change,
            where,
            f"Start a new query (a new checkpointLocation) with startingOffsets "
            f"'{_json(start.kafka_json())}' to read the new schema",
        )


def refuse_changes(
    table: TableSchema, start: Mapping[str, Any]
) -> Callable[[TableSchema, str, Record], None]:
    """What a task of the micro-batch from `start` (`StreamOffset.kafka_json`) does under
    `driver-scan=watermarks` when it meets a selected table whose columns no longer fit
    the stream's `table` (`scan.read_range`'s `changes`): fail the batch, which so
    delivers nothing, naming the change as the driver names it under `driver-scan=all`
    and the batch's start. A query from there needs the driver that stops before the
    change: the rows before it, in this batch, have the old columns.

    Raises (the function returned):
        SchemaError: always.
    """

    def refuse(changed: TableSchema, topic: str, record: Record) -> None:
        raise _change_error(
            table,
            changed,
            (topic, record.partition, record.offset),
            "The micro-batch that met it fails and delivers nothing (driver-scan=watermarks "
            "leaves changes to the tasks). Start a new query (a new checkpointLocation) with "
            f"startingOffsets '{_json(dict(start))}' and option driver-scan=all: it reads the "
            "rows before the change and stops there, naming the offsets to read the new "
            "schema from",
        )

    return refuse


def _change_error(
    old: TableSchema, new: TableSchema, where: tuple[str, int, int], restart: str
) -> SchemaError:
    """The stream's error for a change of its table's columns at `where` (topic,
    partition, offset), `restart` saying how to go on."""
    topic, partition, offset = where
    hint = (
        "; or set option schema-evolution=ignore-new-columns to read on without them"
        if adds_columns_only(old, new)
        else ""
    )
    return SchemaError(
        f"table {new.database}.{new.table} changed at topic {topic} partition {partition} "
        f"offset {offset}: {describe_change(old, new)}; a streaming query keeps the columns "
        f"it started with, so it stops before the change. {restart}{hint}"
    )


@attrs.define
class _Tail:
    """What a back-scan read of one partition: offsets `lo`..`hi`, the watermarks in them
    (offset, ts) rising by offset, and an earlier back-scan's below them, to join."""

    lo: int
    hi: int
    marks: list[tuple[int, int]] = attrs.Factory(list)
    below: _Tail | None = None


def _json(value: dict[str, Any]) -> str:
    return orjson.dumps(value).decode()


def log_cut(config: ReadConfig, start: StreamOffset, cut: Cut) -> None:
    """The driver's INFO line for a micro-batch from `start` it planned
    (`StreamScan.next_cut`)."""
    logger.info(
        "ticdc: micro-batch of %s planned up to %s: resolved ts %s, %s",
        config.named_topics,
        cut.end.kafka_json(),
        cut.resolved_ts if cut.resolved_ts is not None else "(none)",
        describe_cut(cut, start, keep_replays=config.keep_replays),
    )
