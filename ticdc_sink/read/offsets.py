"""Offsets: `startingOffsets` / `endingOffsets` as Spark's Kafka source spells them, and
the offset ranges a read covers.

A spec is `earliest`, `latest`, or JSON `{"topic": {"0": 23, "1": -2}, "other": {...}}`
where -2 means earliest and -1 latest (endingOffsets takes -1 only, as Spark's). JSON must
give every partition of every topic the read reads, as Spark's Kafka source requires of
batch and streaming starts alike. A range is one Kafka partition from `start` (inclusive)
to `end` (exclusive), the unit a Spark partition reads. Partitions are keyed by
(topic, partition) across the topics of a read.

This module is pure: the partitions' current bounds come in as numbers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import attrs
import orjson

from ticdc_sink.errors import ConfigError

__all__ = [
    "EARLIEST",
    "LATEST",
    "Bounds",
    "OffsetRange",
    "OffsetSpec",
    "TopicPartition",
    "parse_offsets",
    "plan_ranges",
]

EARLIEST = -2
LATEST = -1

#: A Kafka partition of a read: (topic, partition).
TopicPartition = tuple[str, int]
#: Each partition's (low, high) offsets: the first message kept, the next to be written.
Bounds = Mapping[TopicPartition, tuple[int, int]]
#: "earliest", "latest", or topic -> partition -> offset (EARLIEST / LATEST allowed).
OffsetSpec = str | dict[str, dict[int, int]]


@attrs.frozen
class OffsetRange:
    """The messages of one partition with `start <= offset < end`."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def empty(self) -> bool:
        return self.end <= self.start


def parse_offsets(text: str, *, option: str, topics: Collection[str]) -> OffsetSpec:
    """Read an offsets option for a read of `topics`.

    Raises:
        ConfigError: not earliest/latest nor JSON of that shape, a topic the read does not
            read or one it leaves out, or (endingOffsets) `earliest` / -2.
    """
    word = text.strip().lower()
    ending = option == "endingOffsets"
    allowed = ("latest",) if ending else ("earliest", "latest")
    if word in allowed:
        return word
    lowest = LATEST if ending else EARLIEST
    example = _orjson_text({t: {"0": 42, "1": lowest} for t in sorted(topics)})
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ConfigError(
            f"option {option} is {text!r}; use {' or '.join(allowed)} or JSON such as {example}",
            option=option,
            value=text,
        ) from None
    if not isinstance(parsed, dict):
        raise ConfigError(
            f"option {option} is {text!r}; give JSON such as {example}",
            option=option,
            value=text,
        )
    unknown = sorted(set(parsed) - set(topics))
    missing = sorted(set(topics) - set(parsed))
    if unknown or missing:
        problem = (
            f"names topic {unknown[0]}, which the read does not read"
            if unknown
            else f"leaves out topic {missing[0]}"
        )
        raise ConfigError(
            f"option {option} is {text!r}; it {problem}: give every topic read "
            f"({', '.join(sorted(topics))}) and each of its partitions, as {example}",
            option=option,
            value=text,
        )
    result: dict[str, dict[int, int]] = {}
    for topic, offsets in parsed.items():
        partitions: dict[int, int] = {}
        if isinstance(offsets, dict):
            for key, value in offsets.items():
                if not (key.isdigit() and type(value) is int and value >= lowest):
                    partitions = {}
                    break
                partitions[int(key)] = value
        if not partitions:
            raise ConfigError(
                f"option {option} is {text!r}; give topic {topic}'s partition numbers and "
                f"offsets (at least {lowest}) as {example}",
                option=option,
                value=text,
            )
        result[topic] = partitions
    return result


def plan_ranges(bounds: Bounds, starting: OffsetSpec, ending: OffsetSpec) -> list[OffsetRange]:
    """One range per partition of `bounds` (every partition of every topic read), ordered
    by topic and partition.

    A starting offset beyond a partition's bounds is clamped into them (the messages
    before the low offset are gone); an ending offset only to the low one: an explicit end
    above the high offset is kept, and the read waits for the partition to reach it
    (`TopicLog.read`), never silently ending short of it.

    Raises:
        ConfigError: a JSON spec that leaves out a partition of a topic or names one it
            does not have, or a start above the end.
    """
    starts = _resolve(bounds, starting, "startingOffsets")
    ends = _resolve(bounds, ending, "endingOffsets")
    ranges = []
    for topic, partition in sorted(bounds):
        start, end = starts[topic, partition], ends[topic, partition]
        if start > end:
            raise ConfigError(
                f"partition {partition} of topic {topic} would be read from offset {start} "
                f"to {end}; startingOffsets must not be above endingOffsets",
                option="startingOffsets",
            )
        ranges.append(OffsetRange(topic, partition, start, end))
    return ranges


def _resolve(bounds: Bounds, spec: OffsetSpec, option: str) -> dict[TopicPartition, int]:
    if isinstance(spec, str):
        return {key: low if spec == "earliest" else high for key, (low, high) in bounds.items()}
    given = {(t, p): o for t, offsets in spec.items() for p, o in offsets.items()}
    unknown = sorted(set(given) - set(bounds))
    missing = sorted(set(bounds) - set(given))
    if unknown or missing:
        topic, partition = unknown[0] if unknown else missing[0]
        problem = (
            f"names partition {partition}, which topic {topic} does not have"
            if unknown
            else f"leaves out partition {partition} of topic {topic}"
        )
        partitions = sorted(p for t, p in bounds if t == topic)
        raise ConfigError(
            f"option {option} {problem}; give every partition of the topic "
            f"({', '.join(map(str, partitions)) or 'none'})",
            option=option,
        )
    resolved = {}
    for key, offset in given.items():
        low, high = bounds[key]
        if offset == EARLIEST:
            resolved[key] = low
        elif offset == LATEST:
            resolved[key] = high
        elif option == "endingOffsets":
            resolved[key] = max(offset, low)
        else:
            resolved[key] = min(max(offset, low), high)
    return resolved


def _orjson_text(value: object) -> str:
    return orjson.dumps(value).decode()
