"""startingOffsets / endingOffsets as Spark's Kafka source spells them, resolved against
the bounds of every partition of every topic read into one range per partition."""

from __future__ import annotations

import pytest

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.offsets import OffsetRange, parse_offsets, plan_ranges

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
    with pytest.raises(ConfigError, match="names partition 2, which topic t does not have"):
        plan_ranges(BOUNDS, "earliest", {"t": {0: 1, 1: 5, 2: 3}})
    with pytest.raises(ConfigError, match=r"leaves out partition 1 of topic b; .* \(0, 1\)"):
        plan_ranges(TWO_TOPICS, {"a": {0: 0}, "b": {0: 2}}, "latest")


def test_start_above_end_is_an_error() -> None:
    with pytest.raises(ConfigError, match="must not be above endingOffsets"):
        plan_ranges(BOUNDS, {"t": {0: 9, 1: 4}}, {"t": {0: 5, 1: 8}})
