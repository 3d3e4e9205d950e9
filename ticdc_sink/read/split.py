"""How a read's offset ranges become Spark tasks: large ranges split (`minPartitions`),
small ones packed (`offsets-per-task`). Batch and streaming reads plan their tasks here
alike.

Split: a read's offset ranges cut into more Spark partitions than there are Kafka
partitions, so a topic of few partitions keeps many executors busy.

How many parts a range gets is Spark's Kafka source's rule
(`KafkaOffsetRangeCalculator.getRanges`): nothing splits when the ranges with data are at
least `minPartitions`; else a range gets `round(size / total * minPartitions)` parts (at
least one), those of one part are left out of the share the others divide, and a split
range is cut into parts of equal size.

Where a part may start: a task in mid-partition needs the replay filter's state there as
a read of the whole range would have it (`replay.ReplayFilter`), which is the resolved ts
(the largest watermark ts since the range's start: it depends on everything before) and,
under watermark consistency, the rows met since the resolved ts last rose. Just after a
watermark that raised the resolved ts the rows are none and the resolved ts is that
watermark's, so a part starts only there: at the boundary nearest each of Spark's cuts,
given the resolved ts the driver found there (a stream's scan; a batch read's
`plan.find_boundaries`), and a range with no boundary inside stays whole (as in Spark,
minPartitions is a hint). Under `consistency=none` only the resolved ts counts, and it
holds from one boundary to the next: a part starts at Spark's cut (`anywhere`), given the
resolved ts of the last boundary before it. With `replays=keep` no state is needed and a
part starts at Spark's cut. The boundaries cost a stream nothing more (its scan knows
every watermark), and a batch read one pass of its driver over the ranges it splits
(Simple rows are not decoded).

Pack (`pack_parts`), after the split: a Python task costs tens of milliseconds before it
reads a message (Spark's JVM tasks cost a few), so a read of many small ranges (a stream
over hundreds of partitions, each with a few rows per micro-batch) spent its time
starting tasks. Parts are packed, in order, into tasks of at most `offsets-per-task`
offsets (default 10,000, about half a second of one task's reading), each task reading
its parts one after the other with one consumer; a part larger than that is a task of its
own, and `0` packs nothing (one task per part). Under `minPartitions` packing keeps at
least that many tasks: the bound is lowered to the offsets of the read over
`minPartitions`, and parts are not packed where fewer tasks would be left. Each part keeps
its own resolved ts, so the replay rule reads it as if it were a task alone.

This module is pure: offsets and numbers in, offsets out.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

from ticdc_sink.read.offsets import OffsetRange, TopicPartition

__all__ = ["Boundaries", "Part", "Task", "pack_bound", "pack_parts", "part_counts", "split_ranges"]

#: A range with the resolved ts of its partition before it (`replay.replay_filter`).
Part = tuple[OffsetRange, int]
#: The parts one Spark task reads, one after the other (`pack_parts`).
Task = tuple[Part, ...]
#: Each partition's offsets where a part may start, rising, each with the resolved ts
#: before it; None: anywhere, the range's resolved ts carried (`replays=keep`).
Boundaries = Mapping[TopicPartition, Sequence[tuple[int, int]]] | None


def part_counts(sizes: Sequence[int], min_partitions: int | None) -> list[int]:
    """How many parts each range of `sizes` (all above 0) is cut into, as Spark's
    `KafkaOffsetRangeCalculator`: one each when they are `min_partitions` or more."""
    if min_partitions is None or len(sizes) >= min_partitions:
        return [1] * len(sizes)
    total = sum(sizes)

    def count(size: int, whole: int, parts: int) -> int:
        # Scala's math.round: half up.
        return max(int(size / whole * parts + 0.5), 1)

    single = [count(size, total, min_partitions) == 1 for size in sizes]
    rest = total - sum(size for size, one in zip(sizes, single, strict=True) if one)
    parts = max(min_partitions - sum(single), 1)
    return [1 if one else count(size, rest, parts) for size, one in zip(sizes, single, strict=True)]


def split_ranges(
    ranges: Sequence[Part],
    min_partitions: int | None,
    boundaries: Boundaries,
    *,
    anywhere: bool = False,
) -> list[Part]:
    """`ranges` (with data) cut into parts for `minPartitions`, in order, each with the
    resolved ts before it; cuts are moved to the nearest of the partition's `boundaries`
    strictly inside the range (none: the range stays whole), or with `anywhere` kept
    where Spark puts them, with the resolved ts of the last boundary at or before each."""
    counts = part_counts([r.end - r.start for r, _ in ranges], min_partitions)
    out: list[Part] = []
    for (offsets, resolved_ts), parts in zip(ranges, counts, strict=True):
        cuts = _even_cuts(offsets, parts)
        found = () if boundaries is None else boundaries.get((offsets.topic, offsets.partition), ())
        inside = [b for b in found if offsets.start < b[0] < offsets.end]
        if boundaries is None:
            starts = [(cut, resolved_ts) for cut in cuts]
        elif anywhere:
            starts = [(cut, _last(inside, cut, resolved_ts)) for cut in cuts]
        else:
            starts = sorted({_nearest(inside, cut) for cut in cuts} if inside else set())
        begin, carried = offsets.start, resolved_ts
        for start, ts in starts:
            out.append((OffsetRange(offsets.topic, offsets.partition, begin, start), carried))
            begin, carried = start, ts
        out.append((OffsetRange(offsets.topic, offsets.partition, begin, offsets.end), carried))
    return out


def _even_cuts(offsets: OffsetRange, parts: int) -> list[int]:
    """Where Spark cuts a range into `parts`: each part `remaining // parts left`, the
    last taking the rounding."""
    cuts, start, remaining = [], offsets.start, offsets.end - offsets.start
    for part in range(parts - 1):
        size = remaining // (parts - part)
        remaining -= size
        start += size
        if offsets.start < start < offsets.end:
            cuts.append(start)
    return sorted(set(cuts))


def _nearest(inside: Sequence[tuple[int, int]], cut: int) -> tuple[int, int]:
    """The boundary nearest `cut` (the earlier of two as near)."""
    i = bisect.bisect_left(inside, (cut,))
    near = inside[max(i - 1, 0) : i + 1]
    return min(near, key=lambda b: (abs(b[0] - cut), b[0]))


def _last(inside: Sequence[tuple[int, int]], cut: int, default: int) -> int:
    """The resolved ts at `cut`: the last boundary's at or before it (`default`: none)."""
    i = bisect.bisect_right(inside, (cut, 1 << 64))
    return inside[i - 1][1] if i else default


def pack_bound(sizes: Sequence[int], per_task: int, min_partitions: int | None) -> int:
    """The most offsets a task of packed parts of `sizes` reads: `per_task`, lowered
    under `min_partitions` to the read's offsets over it (that many tasks of even size);
    0: nothing is packed."""
    if min_partitions is None:
        return per_task
    return min(per_task, sum(sizes) // min_partitions)


def pack_parts(
    parts: Sequence[Part], per_task: int, min_partitions: int | None = None
) -> list[Task]:
    """`parts` packed in order into tasks (`pack_bound`): a part joins the task before it
    while that task stays within the bound and, under `min_partitions`, at least that many
    tasks (or one per part, when fewer) can still be made."""
    sizes = [r.end - r.start for r, _ in parts]
    bound = pack_bound(sizes, per_task, min_partitions)
    wanted = min(min_partitions or 1, len(parts))
    tasks: list[list[Part]] = []
    held = 0  # the offsets of the last task
    for i, (part, size) in enumerate(zip(parts, sizes, strict=True)):
        # Tasks there could still be with this part packed: those made, and the rest alone.
        left = len(tasks) + len(parts) - i - 1
        if tasks and held + size <= bound and left >= wanted:
            tasks[-1].append(part)
            held += size
        else:
            tasks.append([part])
            held = size
    return [tuple(task) for task in tasks]
