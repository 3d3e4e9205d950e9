"""startingOffsets / endingOffsets as Spark's Kafka source spells them, and the timestamp
options before them (resolved by the brokers' offsetsForTimes, Spark's precedence and
no-match strategy), resolved against the bounds of every partition of every topic read
into one range per partition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.offsets import (
    LATEST,
    OffsetRange,
    ending_spec,
    parse_offsets,
    parse_timestamps,
    plan_ranges,
    starting_spec,
)
from ticdc_sink.read.options import ReadConfig

BOUNDS = {("t", 0): (0, 10), ("t", 1): (4, 8)}
TWO_TOPICS = {("a", 0): (0, 5), ("b", 0): (2, 9), ("b", 1): (0, 3)}


def test_earliest_to_latest_is_every_kept_message() -> None:
    assert plan_ranges(BOUNDS, "earliest", "latest") == [
        OffsetRange("t", 0, 0, 10),
        OffsetRange("t", 1, 4, 8),
    ]


def test_latest_to_latest_is_empty() -> None:
    ranges = plan_ranges(BOUNDS, "latest", "latest")
    assert all(r.empty for r in ranges)


def test_json_offsets_with_spark_sentinels_and_clamping() -> None:
    starting = parse_offsets('{"t": {"0": 3, "1": -2}}', option="startingOffsets", topics=["t"])
    ending = parse_offsets('{"t": {"0": 99, "1": 6}}', option="endingOffsets", topics=["t"])
    assert starting == {"t": {0: 3, 1: -2}}
    assert plan_ranges(BOUNDS, starting, ending) == [
        OffsetRange("t", 0, 3, 99),  # past the end: read up to it, never clamped silently
        OffsetRange("t", 1, 4, 6),  # -2 is earliest
    ]
    # A start past the end begins at the end; an end below the first kept offset ends
    # there (the messages before it are gone).
    past = parse_offsets('{"t": {"0": 50, "1": 2}}', option="startingOffsets", topics=["t"])
    below = parse_offsets('{"t": {"0": 60, "1": 1}}', option="endingOffsets", topics=["t"])
    assert plan_ranges(BOUNDS, past, below) == [
        OffsetRange("t", 0, 10, 60),
        OffsetRange("t", 1, 4, 4),
    ]
    latest = parse_offsets('{"t": {"0": -1, "1": -1}}', option="endingOffsets", topics=["t"])
    assert plan_ranges(BOUNDS, "earliest", latest)[1] == OffsetRange("t", 1, 4, 8)


def test_several_topics_plan_every_partition_of_each_with_per_topic_json() -> None:
    starting = parse_offsets(
        '{"b": {"0": 4, "1": -2}, "a": {"0": 1}}', option="startingOffsets", topics=("a", "b")
    )
    assert starting == {"a": {0: 1}, "b": {0: 4, 1: -2}}
    assert plan_ranges(TWO_TOPICS, starting, "latest") == [
        OffsetRange("a", 0, 1, 5),
        OffsetRange("b", 0, 4, 9),
        OffsetRange("b", 1, 0, 3),
    ]


@pytest.mark.parametrize(
    ("text", "option", "words"),
    [
        ("first", "startingOffsets", "use earliest or latest or JSON"),
        ("earliest", "endingOffsets", "use latest or JSON"),
        ('{"other": {"0": 1}}', "startingOffsets", "names topic other, which the read does not"),
        ("[1]", "startingOffsets", "give JSON such as"),
        ('{"t": {"0": -2}}', "endingOffsets", "at least -1"),
        ('{"t": {"x": 1}}', "startingOffsets", "give topic t's partition numbers"),
        ('{"t": []}', "startingOffsets", "give topic t's partition numbers"),
    ],
)
def test_bad_specs_name_the_option(text: str, option: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        parse_offsets(text, option=option, topics=["t"])
    assert caught.value.option == option


def test_json_must_name_every_topic_read_as_sparks_kafka_source() -> None:
    with pytest.raises(ConfigError, match=r"leaves out topic b: give every topic read \(a, b\)"):
        parse_offsets('{"a": {"0": 1}}', option="startingOffsets", topics=("a", "b"))


def test_json_must_cover_exactly_the_topics_partitions() -> None:
    with pytest.raises(ConfigError, match="leaves out partition 1 of topic t"):
        plan_ranges(BOUNDS, {"t": {0: 1}}, "latest")
    with pytest.raises(
        ConfigError, match="names partition 2 of topic t, which the read does not read"
    ):
        plan_ranges(BOUNDS, "earliest", {"t": {0: 1, 1: 5, 2: 3}})
    with pytest.raises(ConfigError, match=r"leaves out partition 1 of topic b; .* \(0, 1\)"):
        plan_ranges(TWO_TOPICS, {"a": {0: 0}, "b": {0: 2}}, "latest")


def test_start_above_end_is_an_error() -> None:
    with pytest.raises(ConfigError, match="must not be above endingOffsets"):
        plan_ranges(BOUNDS, {"t": {0: 9, 1: 4}}, {"t": {0: 5, 1: 8}})


def _brokers(found: dict[tuple[str, int], int | None]) -> Any:
    """An offsetsForTimes answering `found` (partition -> offset), recording each ask."""
    asked: list[dict[tuple[str, int], int]] = []

    def offsets_for_times(wanted: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], Any]:
        asked.append(dict(wanted))
        return {key: found[key] for key in wanted}

    offsets_for_times.asked = asked  # type: ignore[attr-defined]
    return offsets_for_times


def _read(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "h:1", "topic": "t", **options})


def test_timestamps_become_the_offsets_the_brokers_find_by_sparks_precedence() -> None:
    brokers = _brokers({("t", 0): 6, ("t", 1): 5})
    config = _read(
        startingTimestamp="1000",
        startingOffsetsByTimestamp='{"t": {"0": 1, "1": 2}}',
        startingOffsets="latest",
    )
    spec = starting_spec(config, ["t"], BOUNDS, brokers, default="earliest")
    assert spec == {"t": {0: 6, 1: 5}}
    assert brokers.asked == [{("t", 0): 1000, ("t", 1): 1000}]
    by_partition = _read(startingOffsetsByTimestamp='{"t": {"0": 1, "1": 2}}')
    starting_spec(by_partition, ["t"], BOUNDS, brokers, default="earliest")
    assert brokers.asked[-1] == {("t", 0): 1, ("t", 1): 2}
    # Without a timestamp option, the offsets option (or the default), and no broker ask.
    assert starting_spec(_read(), ["t"], BOUNDS, brokers, default="earliest") == "earliest"
    assert ending_spec(_read(endingOffsets="latest"), ["t"], BOUNDS, brokers) == "latest"
    assert len(brokers.asked) == 2
    ending = ending_spec(_read(endingTimestamp="2000"), ["t"], BOUNDS, brokers)
    ranges = plan_ranges(BOUNDS, spec, ending, options=("startingTimestamp", "endingTimestamp"))
    assert ranges == [OffsetRange("t", 0, 6, 6), OffsetRange("t", 1, 5, 5)]


def test_a_timestamp_no_message_reaches_follows_the_strategy_and_ends_at_latest() -> None:
    brokers = _brokers({("t", 0): 3, ("t", 1): None})
    with pytest.raises(ConfigError) as caught:
        starting_spec(_read(startingTimestamp="70"), ["t"], BOUNDS, brokers, default="earliest")
    assert str(caught.value).startswith(
        "ticdc: option startingTimestamp: partition 1 of topic t has no message with a "
        "timestamp at or after 70"
    )
    assert caught.value.option == "startingTimestamp"
    latest = _read(startingTimestamp="70", startingOffsetsByTimestampStrategy="latest")
    spec = starting_spec(latest, ["t"], BOUNDS, brokers, default="earliest")
    assert spec == {"t": {0: 3, 1: LATEST}}
    ending = ending_spec(_read(endingTimestamp="70"), ["t"], BOUNDS, brokers)
    assert plan_ranges(BOUNDS, "earliest", ending) == [
        OffsetRange("t", 0, 0, 3),
        OffsetRange("t", 1, 4, 8),  # no message at or after it: to the partition's end
    ]


def test_by_timestamp_json_names_every_partition_read() -> None:
    brokers = _brokers({("t", 0): 1, ("t", 1): 5})
    with pytest.raises(ConfigError, match="leaves out partition 1 of topic t") as caught:
        starting_spec(
            _read(startingOffsetsByTimestamp='{"t": {"0": 1}}'),
            ["t"],
            BOUNDS,
            brokers,
            default="earliest",
        )
    assert caught.value.option == "startingOffsetsByTimestamp"
    with pytest.raises(ConfigError, match="names partition 7 of topic t, which the read does"):
        ending_spec(
            _read(endingOffsetsByTimestamp='{"t": {"0": 1, "1": 1, "7": 1}}'),
            ["t"],
            BOUNDS,
            brokers,
        )
    assert brokers.asked == []  # refused before the brokers are asked


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1000", "give JSON such as"),
        ("soon", "use JSON such as"),
        ('{"t": {"0": -1}}', "partition numbers and timestamps"),
        ('{"u": {"0": 5}}', "names topic u, which the read does not read"),
    ],
)
def test_bad_by_timestamp_json_names_the_option(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        parse_timestamps(text, option="endingOffsetsByTimestamp", topics=["t"])
    assert caught.value.option == "endingOffsetsByTimestamp"


def test_a_start_past_the_end_names_the_options_that_gave_them() -> None:
    with pytest.raises(ConfigError, match="startingTimestamp must not be above endingOffsets"):
        plan_ranges(
            BOUNDS,
            {"t": {0: 9, 1: 4}},
            {"t": {0: 5, 1: 8}},
            options=("startingTimestamp", "endingOffsets"),
        )
