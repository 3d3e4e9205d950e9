"""Offsets: `startingOffsets` / `endingOffsets` as Spark's Kafka source spells them, and
the offset ranges a read covers.

A spec is `earliest`, `latest`, or JSON `{"topic": {"0": 23, "1": -2}}` where -2 means
earliest and -1 latest (endingOffsets takes -1 only, as Spark's). A range is one Kafka
partition from `start` (inclusive) to `end` (exclusive), the unit a Spark partition reads.

This module is pure: the partitions' current bounds come in as numbers.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import orjson

from ticdc_sink.errors import ConfigError

__all__ = ["EARLIEST", "LATEST", "OffsetRange", "OffsetSpec", "parse_offsets", "plan_ranges"]

EARLIEST = -2
LATEST = -1

#: "earliest", "latest", or partition -> offset (EARLIEST / LATEST allowed).
OffsetSpec = str | dict[int, int]


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


def parse_offsets(text: str, *, option: str, topic: str) -> OffsetSpec:
    """Read an offsets option for `topic`.

    Raises:
        ConfigError: not earliest/latest nor JSON of that shape, another topic, or
            (endingOffsets) `earliest` / -2.
    """
    word = text.strip().lower()
    ending = option == "endingOffsets"
    allowed = ("latest",) if ending else ("earliest", "latest")
    if word in allowed:
        return word
    example = f'{{"{topic}": {{"0": 42, "1": {LATEST if ending else EARLIEST}}}}}'
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ConfigError(
            f"option {option} is {text!r}; use {' or '.join(allowed)} or JSON such as {example}",
            option=option,
            value=text,
        ) from None
    if not isinstance(parsed, dict) or set(parsed) != {topic}:
        raise ConfigError(
            f"option {option} is {text!r}; it must name topic {topic} only, as {example}",
            option=option,
            value=text,
        )
    offsets = parsed[topic]
    result: dict[int, int] = {}
    lowest = LATEST if ending else EARLIEST
    if isinstance(offsets, dict):
        for key, value in offsets.items():
            if not (key.isdigit() and type(value) is int and value >= lowest):
                result = {}
                break
            result[int(key)] = value
    if not result:
        raise ConfigError(
            f"option {option} is {text!r}; give partition numbers and offsets (at least "
            f"{lowest}) as {example}",
            option=option,
            value=text,
        )
    return result


def plan_ranges(
    topic: str,
    bounds: Mapping[int, tuple[int, int]],
    starting: OffsetSpec,
    ending: OffsetSpec,
) -> list[OffsetRange]:
    """One range per partition of `topic`, given each partition's (low, high) offsets.

    An offset beyond a partition's bounds is clamped into them (the messages before the
    low offset are gone; a read never waits for messages beyond the high one).

    Raises:
        ConfigError: a JSON spec that leaves out a partition of the topic or names one it
            does not have, or a start above the end.
    """
    starts = _resolve(topic, bounds, starting, "startingOffsets")
    ends = _resolve(topic, bounds, ending, "endingOffsets")
    ranges = []
    for partition in sorted(bounds):
        start, end = starts[partition], ends[partition]
        if start > end:
            raise ConfigError(
                f"partition {partition} of topic {topic} would be read from offset {start} "
                f"to {end}; startingOffsets must not be above endingOffsets",
                option="startingOffsets",
            )
        ranges.append(OffsetRange(topic, partition, start, end))
    return ranges


def _resolve(
    topic: str, bounds: Mapping[int, tuple[int, int]], spec: OffsetSpec, option: str
) -> dict[int, int]:
    if isinstance(spec, str):
        return {p: low if spec == "earliest" else high for p, (low, high) in bounds.items()}
    unknown = sorted(set(spec) - set(bounds))
    missing = sorted(set(bounds) - set(spec))
    if unknown or missing:
        problem = (
            f"names partition {unknown[0]}, which topic {topic} does not have"
            if unknown
            else f"leaves out partition {missing[0]} of topic {topic}"
        )
        raise ConfigError(
            f"option {option} {problem}; give every partition of the topic "
            f"({', '.join(map(str, sorted(bounds)))})",
            option=option,
        )
    resolved = {}
    for partition, offset in spec.items():
        low, high = bounds[partition]
        if offset == EARLIEST:
            resolved[partition] = low
        elif offset == LATEST:
            resolved[partition] = high
        else:
            resolved[partition] = min(max(offset, low), high)
    return resolved
