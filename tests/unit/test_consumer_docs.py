"""README's "Who reads what we write" table is tests/support/consumers.py rendered: the
interop tests take each consumer's options and settings from that list, so the README
cannot drift from what they run."""

from __future__ import annotations

from pathlib import Path

from tests.support.consumers import CONSUMERS, consumers_table
from ticdc_sink.config import SinkConfig

README = Path(__file__).resolve().parents[2] / "README.md"
_HEADING = "### Who reads what we write\n"


def test_readme_table_is_the_consumer_list() -> None:
    section = README.read_text().split(_HEADING, 1)[1]
    header = consumers_table().split("\n", 1)[0]
    table = header + section.split(header, 1)[1].split("\n\n", 1)[0] + "\n"
    assert table == consumers_table(), (
        "README's table of consumers differs from tests/support/consumers.py; paste the "
        "output of `python -m tests.support.consumers`:\n" + consumers_table()
    )


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
