"""The reader's options: defaults, Spark's lowercased keys, kafka.* pass-through, and
errors that name the option."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.options import READ_OPTIONS, ReadConfig

BASE = {"kafka.bootstrap.servers": "h:9092", "topic": "t"}


def test_defaults() -> None:
    config = ReadConfig.from_options(BASE)
    assert (config.bootstrap_servers, config.topic, config.protocol) == ("h:9092", "t", "simple")
    assert (config.starting_offsets, config.ending_offsets) == (None, "latest")
    assert not config.kafka_columns and config.client == ()
    assert pickle.loads(pickle.dumps(config)) == config and hash(config)


def test_spark_option_names_in_any_case_and_kafka_settings_pass_through() -> None:
    config = ReadConfig.from_options(
        {
            "KAFKA.BOOTSTRAP.SERVERS": "h:1",
            "Topic": "t",
            "startingOffsets": '{"t": {"0": 5}}',
            "endingoffsets": "latest",
            "kafka.fetch.min.bytes": "10",
            "kafka-columns": "TRUE",
            "kafkaConsumer.pollTimeoutMs": "500",
            "path": "ignored: Spark's load(path)",
        }
    )
    assert config.starting_offsets == '{"t": {"0": 5}}'
    assert config.client == (("fetch.min.bytes", "10"),)
    assert config.kafka_columns and config.poll_timeout_s == 0.5


def test_streaming_options() -> None:
    config = ReadConfig.from_options(BASE)
    assert config.watermark_consistency and not config.ignore_new_columns
    assert config.max_offsets_per_trigger is None
    config = ReadConfig.from_options(
        {
            **BASE,
            "consistency": "NONE",
            "maxOffsetsPerTrigger": "500",
            "schema-evolution": "ignore-new-columns",
        }
    )
    assert not config.watermark_consistency and config.ignore_new_columns
    assert config.max_offsets_per_trigger == 500


@pytest.mark.parametrize(
    ("options", "option", "words"),
    [
        ({"topic": "t"}, "kafka.bootstrap.servers", "is not set"),
        ({"kafka.bootstrap.servers": "h:1"}, "topic", "is not set"),
        ({**BASE, "startingoffset": "earliest"}, "startingoffset", "did you mean startingoffsets"),
        ({**BASE, "protocol": "maxwell"}, "protocol", "reading takes simple, avro, debezium"),
        ({**BASE, "protocol": "avro"}, "schema-registry", "is not set"),
        ({**BASE, "protocol": "debezium", "encoding-format": "avro"}, "encoding-format", "json"),
        ({**BASE, "schema-registry": "http://u:p@r:1"}, "schema-registry", "schema-registry-user"),
        ({**BASE, "encoding-format": "xml"}, "encoding-format", "json, avro"),
        ({**BASE, "kafka-columns": "yes"}, "kafka-columns", "use true or false"),
        ({**BASE, "on-bad-message": "ignore"}, "on-bad-message", "reading takes fail, skip"),
        ({**BASE, "kafkaconsumer.polltimeoutms": "0"}, "kafkaconsumer.polltimeoutms", "above 0"),
        ({**BASE, "consistency": "strict"}, "consistency", "reading takes watermark, none"),
        ({**BASE, "maxoffsetspertrigger": "-5"}, "maxoffsetspertrigger", "offsets above 0"),
        ({**BASE, "schema-evolution": "add"}, "schema-evolution", "fail, ignore-new-columns"),
    ],
)
def test_errors_name_the_option(options: dict[str, str], option: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        ReadConfig.from_options(options)
    assert caught.value.option == option
    assert str(caught.value).startswith("ticdc: ")


def test_every_option_is_in_the_readmes_reading_table() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Reading TiCDC topics", 1)[1].split("\n## ", 1)[0]
    documented = {
        name.lower()
        for line in section.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`([^`]+)`", line.split("|")[1])
    }
    assert documented == set(READ_OPTIONS)
    assert "on-bad-message" in READ_OPTIONS
