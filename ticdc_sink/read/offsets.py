"""Offsets: where a read starts and ends, as Spark's Kafka source's options say it, and
the offset ranges a read covers.

`startingOffsets` / `endingOffsets`: `earliest`, `latest`, or JSON `{"topic": {"0": 23,
"1": -2}, "other": {...}}` where -2 means earliest and -1 latest (endingOffsets takes -1
only, as Spark's). `startingTimestamp` / `endingTimestamp` (one timestamp for every
partition) and `startingOffsetsByTimestamp` / `endingOffsetsByTimestamp` (JSON of the same
shape, a timestamp per partition), in milliseconds since the epoch, are resolved by the
brokers' offsetsForTimes (the first offset whose message timestamp is at or after it) into
concrete offsets, then planned as JSON offsets are. Spark's precedence: a timestamp
option before a by-timestamp one before the offsets one (`ReadConfig.starting_option`).
A partition with no message at or after the timestamp starts, as Spark's, by
`startingOffsetsByTimestampStrategy` (error, or latest), and ends at latest.

JSON must give every partition of every topic the read reads, as Spark's Kafka source
requires of batch and streaming starts alike. A range is one Kafka partition from `start`
(inclusive) to `end` (exclusive), the unit a Spark partition reads. Partitions are keyed
by (topic, partition) across the topics of a read.

This module is pure: the partitions' current bounds come in as numbers, the brokers'
offsetsForTimes as a function (`TopicLog.offsets_for_times`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import attrs
import orjson

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.options import ReadConfig

__all__ = [
    "EARLIEST",
    "LATEST",
    "Bounds",
    "OffsetRange",
    "OffsetSpec",
    "OffsetsForTimes",
    "TopicPartition",
    "ending_spec",
    "parse_offsets",
    "parse_timestamps",
    "plan_ranges",
    "starting_spec",
]

EARLIEST = -2
LATEST = -1
# A timestamp in milliseconds since the epoch, for messages' examples.
_SAMPLE_TIMESTAMP = 1_700_000_000_000

#: A Kafka partition of a read: (topic, partition).
TopicPartition = tuple[str, int]
#: Each partition's (low, high) offsets: the first message kept, the next to be written.
Bounds = Mapping[TopicPartition, tuple[int, int]]
#: "earliest", "latest", or topic -> partition -> offset (EARLIEST / LATEST allowed).
OffsetSpec = str | dict[str, dict[int, int]]
#: The brokers' offsetsForTimes: (topic, partition) -> timestamp in, (topic, partition) ->
#: the first offset at or after it out (None: no message is).
OffsetsForTimes = Callable[[Mapping[TopicPartition, int]], Mapping[TopicPartition, int | None]]


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
    return _parse_json(
        text, option=option, topics=topics, lowest=lowest, words=" or ".join(allowed) + " or "
    )


def parse_timestamps(
    text: str, *, option: str, topics: Collection[str]
) -> dict[str, dict[int, int]]:
    """Read a by-timestamp option (startingOffsetsByTimestamp, endingOffsetsByTimestamp)
    for a read of `topics`: topic -> partition -> timestamp (milliseconds, at least 0).

    Raises:
        ConfigError: not JSON of that shape, a topic the read does not read or one it
            leaves out, or a timestamp below 0.
    """
    return _parse_json(text, option=option, topics=topics, lowest=0, words="")


def _parse_json(
    text: str, *, option: str, topics: Collection[str], lowest: int, words: str
) -> dict[str, dict[int, int]]:
    """JSON {topic: {partition: number}} naming exactly `topics`, numbers at least `lowest`."""
    # Offsets: 42 and the lowest special one; timestamps: one in milliseconds.
    second = lowest if lowest < 0 else _SAMPLE_TIMESTAMP
    first = 42 if lowest < 0 else _SAMPLE_TIMESTAMP
    example = _orjson_text({t: {"0": first, "1": second} for t in sorted(topics)})
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ConfigError(
            f"option {option} is {text!r}; use {words}JSON such as {example}",
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
    what = "timestamps" if lowest == 0 else "offsets"
    for topic, values in parsed.items():
        partitions: dict[int, int] = {}
        if isinstance(values, dict):
            for key, value in values.items():
                if not (key.isdigit() and type(value) is int and value >= lowest):
                    partitions = {}
                    break
                partitions[int(key)] = value
        if not partitions:
            raise ConfigError(
                f"option {option} is {text!r}; give topic {topic}'s partition numbers and "
                f"{what} (at least {lowest}) as {example}",
                option=option,
                value=text,
            )
        result[topic] = partitions
    return result


def starting_spec(
    config: ReadConfig,
    topics: Collection[str],
    bounds: Bounds,
    offsets_for_times: OffsetsForTimes,
    *,
    default: str,
) -> OffsetSpec:
    """Where a read of `topics` (the partitions of `bounds`) starts, by the option that
    decides (`ReadConfig.starting_option`; `default` when none is given): timestamps
    resolved by `offsets_for_times` into offsets, a partition without a message at or
    after its timestamp at latest under startingOffsetsByTimestampStrategy=latest.

    Raises:
        ConfigError: a bad option (as `parse_offsets`, `parse_timestamps`), or a partition
            without a message at or after its timestamp (strategy error, the default).
    """
    option = config.starting_option
    if option == "startingOffsets":
        return parse_offsets(config.starting_offsets or default, option=option, topics=topics)
    return _by_timestamp(
        config.starting_timestamp,
        config.starting_offsets_by_timestamp,
        option=option,
        topics=topics,
        bounds=bounds,
        offsets_for_times=offsets_for_times,
        latest_if_none=config.starting_timestamp_latest,
    )


def ending_spec(
    config: ReadConfig, topics: Collection[str], bounds: Bounds, offsets_for_times: OffsetsForTimes
) -> OffsetSpec:
    """Where a read ends, as `starting_spec` (`ReadConfig.ending_option`; default latest);
    a partition without a message at or after its timestamp ends at latest, as Spark's.

    Raises:
        ConfigError: a bad option (as `parse_offsets`, `parse_timestamps`).
    """
    option = config.ending_option
    if option == "endingOffsets":
        return parse_offsets(config.ending_offsets, option=option, topics=topics)
    return _by_timestamp(
        config.ending_timestamp,
        config.ending_offsets_by_timestamp,
        option=option,
        topics=topics,
        bounds=bounds,
        offsets_for_times=offsets_for_times,
        latest_if_none=True,
    )


def _by_timestamp(
    timestamp: int | None,
    by_partition: str | None,
    *,
    option: str,
    topics: Collection[str],
    bounds: Bounds,
    offsets_for_times: OffsetsForTimes,
    latest_if_none: bool,
) -> dict[str, dict[int, int]]:
    """The offsets the brokers find for `timestamp` (every partition of `bounds`) or for
    `by_partition` (the by-timestamp JSON), as an OffsetSpec."""
    if timestamp is not None:
        wanted = dict.fromkeys(bounds, timestamp)
    else:
        assert by_partition is not None  # the option that decides is one of the two
        parsed = parse_timestamps(by_partition, option=option, topics=topics)
        wanted = {(t, p): ts for t, given in parsed.items() for p, ts in given.items()}
        _check_partitions(wanted, bounds, option)
    found = offsets_for_times(wanted)
    spec: dict[str, dict[int, int]] = {}
    for (topic, partition), ts in sorted(wanted.items()):
        offset = found.get((topic, partition))
        if offset is None and not latest_if_none:
            raise ConfigError(
                f"option {option}: partition {partition} of topic {topic} has no message "
                f"with a timestamp at or after {ts}; give an earlier timestamp, or set "
                "option startingOffsetsByTimestampStrategy=latest to start such partitions "
                "at their latest offset",
                option=option,
                value=str(ts),
            )
        spec.setdefault(topic, {})[partition] = LATEST if offset is None else offset
    return spec


def plan_ranges(
    bounds: Bounds,
    starting: OffsetSpec,
    ending: OffsetSpec,
    *,
    options: tuple[str, str] = ("startingOffsets", "endingOffsets"),
) -> list[OffsetRange]:
    """One range per partition of `bounds` (every partition of every topic read), ordered
    by topic and partition; `options` name the options `starting` and `ending` come from,
    for messages.

    A starting offset beyond a partition's bounds is clamped into them (the messages
    before the low offset are gone); an ending offset only to the low one: an explicit end
    above the high offset is kept, and the read waits for the partition to reach it
    (`TopicLog.read`), never silently ending short of it.

    Raises:
        ConfigError: a JSON spec that leaves out a partition of a topic or names one it
            does not have, or a start above the end.
    """
    first, last = options
    starts = _resolve(bounds, starting, first, ending=False)
    ends = _resolve(bounds, ending, last, ending=True)
    ranges = []
    for topic, partition in sorted(bounds):
        start, end = starts[topic, partition], ends[topic, partition]
        if start > end:
            raise ConfigError(
                f"partition {partition} of topic {topic} would be read from offset {start} "
                f"to {end}; {first} must not be above {last}",
                option=first,
            )
        ranges.append(OffsetRange(topic, partition, start, end))
    return ranges


def _resolve(
    bounds: Bounds, spec: OffsetSpec, option: str, *, ending: bool
) -> dict[TopicPartition, int]:
    if isinstance(spec, str):
        return {key: low if spec == "earliest" else high for key, (low, high) in bounds.items()}
    given = {(t, p): o for t, offsets in spec.items() for p, o in offsets.items()}
    _check_partitions(given, bounds, option)
    resolved = {}
    for key, offset in given.items():
        low, high = bounds[key]
        if offset == EARLIEST:
            resolved[key] = low
        elif offset == LATEST:
            resolved[key] = high
        elif ending:
            resolved[key] = max(offset, low)
        else:
            resolved[key] = min(max(offset, low), high)
    return resolved


def _check_partitions(given: Collection[TopicPartition], bounds: Bounds, option: str) -> None:
    """Raises:
    ConfigError: `given` (an option's partitions) leaves out a partition of `bounds` (the
        partitions read), or names one that is not read.
    """
    unknown = sorted(set(given) - set(bounds))
    missing = sorted(set(bounds) - set(given))
    if unknown or missing:
        topic, partition = unknown[0] if unknown else missing[0]
        problem = (
            f"names partition {partition} of topic {topic}, which the read does not read"
            if unknown
            else f"leaves out partition {partition} of topic {topic}"
        )
        partitions = sorted(p for t, p in bounds if t == topic)
        raise ConfigError(
            f"option {option} {problem}; give every partition of the topic that is read "
            f"({', '.join(map(str, partitions)) or 'none'})",
            option=option,
        )


def _orjson_text(value: object) -> str:
    return orjson.dumps(value).decode()
