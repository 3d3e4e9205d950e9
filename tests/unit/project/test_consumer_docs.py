"""The "Who reads what we write" page is tests/support/consumers.py rendered at every build
of the docs: the interop tests take each consumer's options and settings from that list,
so the page cannot drift from what they run."""

from __future__ import annotations

from tests.support import paths
from tests.support.consumers import CONSUMERS, consumers_table
from ticdc_sink.config import SinkConfig

PAGE = paths.DOCS / "reference" / "consumers.md"


def test_the_page_renders_every_consumer() -> None:
    assert "\n<!-- generated: consumers -->\n" in PAGE.read_text()
    rows = consumers_table().splitlines()[2:]
    assert [row.split(" | ", 1)[0].removeprefix("| ") for row in rows] == [
        consumer.name for consumer in CONSUMERS.values()
    ]


def test_every_consumer_option_is_a_sink_option() -> None:
    # The options a consumer row names are real write options with values the sink takes.
    for consumer in CONSUMERS.values():
        options = {
            k: v.replace("<registry>", "http://registry:8081") for k, v in consumer.options.items()
        }
        options.setdefault("protocol", consumer.protocols[0])
        SinkConfig.from_options(
            {
                "kafka.bootstrap.servers": "broker:9092",
                "topic": "t_{schema}_{table}",
                "database": "shop",
                "table": "items",
                **options,
            }
        )
