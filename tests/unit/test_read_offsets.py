"""startingOffsets / endingOffsets as Spark's Kafka source spells them, resolved against a
topic's bounds into one range per partition."""

from __future__ import annotations

import pytest

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.offsets import OffsetRange, parse_offsets, plan_ranges

BOUNDS = {0: (0, 10), 1: (4, 8)}


def test_earliest_to_latest_is_every_kept_message() -> None:
    assert plan_ranges("t", BOUNDS, "earliest", "latest") == [
        OffsetRange("t", 0, 0, 10),
        OffsetRange("t", 1, 4, 8),
    ]


def test_latest_to_latest_is_empty() -> None:
    ranges = plan_ranges("t", BOUNDS, "latest", "latest")
    assert all(r.empty for r in ranges)


def test_json_offsets_with_spark_sentinels_and_clamping() -> None:
    starting = parse_offsets('{"t": {"0": 3, "1": -2}}', option="startingOffsets", topic="t")
    ending = parse_offsets('{"t": {"0": 99, "1": 6}}', option="endingOffsets", topic="t")
    assert starting == {0: 3, 1: -2}
    assert plan_ranges("t", BOUNDS, starting, ending) == [
        OffsetRange("t", 0, 3, 10),  # 99 is past the end: the read stops at the end
        OffsetRange("t", 1, 4, 6),  # -2 is earliest
    ]
    latest = parse_offsets('{"t": {"0": -1, "1": -1}}', option="endingOffsets", topic="t")
    assert plan_ranges("t", BOUNDS, "earliest", latest)[1] == OffsetRange("t", 1, 4, 8)


@pytest.mark.parametrize(
    ("text", "option", "words"),
    [
        ("first", "startingOffsets", "use earliest or latest or JSON"),
        ("earliest", "endingOffsets", "use latest or JSON"),
        ('{"other": {"0": 1}}', "startingOffsets", "must name topic t only"),
        ('{"t": {"0": -2}}', "endingOffsets", "at least -1"),
        ('{"t": {"x": 1}}', "startingOffsets", "give partition numbers"),
        ('{"t": []}', "startingOffsets", "give partition numbers"),
    ],
)
def test_bad_specs_name_the_option(text: str, option: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        parse_offsets(text, option=option, topic="t")
    assert caught.value.option == option


def test_json_must_cover_exactly_the_topics_partitions() -> None:
    with pytest.raises(ConfigError, match="leaves out partition 1 of topic t"):
        plan_ranges("t", BOUNDS, {0: 1}, "latest")
    with pytest.raises(ConfigError, match="names partition 2, which topic t does not have"):
        plan_ranges("t", BOUNDS, "earliest", {0: 1, 1: 5, 2: 3})


def test_start_above_end_is_an_error() -> None:
    with pytest.raises(ConfigError, match="must not be above endingOffsets"):
        plan_ranges("t", BOUNDS, {0: 9, 1: 4}, {0: 5, 1: 8})
