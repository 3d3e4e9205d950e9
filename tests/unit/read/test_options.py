"""The reader's options: defaults, Spark's lowercased keys, kafka.* pass-through, and
errors that name the option."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import attrs
import pytest

from tests.support import paths
from ticdc_sink.errors import ConfigError
from ticdc_sink.read.options import READ_OPTIONS, ReadConfig, ReadOption, select_topics

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
        ({**BASE, "topicPattern": "x.*"}, "topicPattern", r"topic \(t\) and topicPattern"),
        ({**BASE, "topic": "a,b,a"}, "topic", "names topic a twice"),
        ({**BASE, "topic": "tidb_{schema}"}, "topic", "a writer's topic expression"),
        ({"kafka.bootstrap.servers": "h:1", "topicPattern": "("}, "topicPattern", "not a regular"),
        ({**BASE, "subscribe": "t"}, "subscribe", "options subscribe and topic are both set"),
        (
            {**BASE, "topic": "x", "topicPattern": "a", "subscribePattern": "t.*"},
            "subscribePattern",
            "subscribePattern and topicPattern are both set",
        ),
        ({**BASE, "subscribePattern": "t.*"}, "subscribePattern", r"\(t\) and subscribePattern"),
        ({"kafka.bootstrap.servers": "h:1", "subscribe": "a,a"}, "subscribe", "names topic a"),
        ({**BASE, "assign": '{"t": [0]}'}, "assign", r"topic \(t\) and assign \("),
        ({"kafka.bootstrap.servers": "h:1", "assign": "[0]"}, "assign", "give JSON of each"),
        ({"kafka.bootstrap.servers": "h:1", "assign": '{"t": []}'}, "assign", "give JSON of"),
        ({"kafka.bootstrap.servers": "h:1", "assign": '{"t": [0, 0]}'}, "assign", "0 of topic t"),
        ({**BASE, "startingTimestamp": "-1"}, "startingTimestamp", "milliseconds since the"),
        ({**BASE, "endingTimestamp": "soon"}, "endingTimestamp", "milliseconds since the"),
        (
            {**BASE, "startingTimestamp": "5", "endingTimestamp": "4"},
            "startingTimestamp",
            r"startingTimestamp \(5\) is after endingTimestamp \(4\)",
        ),
        (
            {**BASE, "startingOffsetsByTimestampStrategy": "earliest"},
            "startingoffsetsbytimestampstrategy",
            "reading takes error, latest",
        ),
        ({**BASE, "includeHeaders": "yes"}, "includeheaders", "use true or false"),
        ({**BASE, "startingoffset": "earliest"}, "startingoffset", "did you mean startingoffsets"),
        ({**BASE, "protocol": "maxwell"}, "protocol", "reading takes simple, avro, debezium"),
        ({**BASE, "protocol": "avro"}, "schema-registry", "is not set"),
        ({**BASE, "protocol": "debezium", "encoding-format": "avro"}, "encoding-format", "json"),
        (
            {**BASE, "schema-registry": "http://u:p@r:1", "schema-registry-user": "v"},
            "schema-registry",
            "give the credentials once",
        ),
        ({**BASE, "encoding-format": "xml"}, "encoding-format", "json, avro"),
        ({**BASE, "kafka-columns": "yes"}, "kafka-columns", "use true or false"),
        ({**BASE, "on-bad-message": "ignore"}, "on-bad-message", "reading takes fail, skip"),
        ({**BASE, "kafkaconsumer.polltimeoutms": "0"}, "kafkaconsumer.polltimeoutms", "above 0"),
        ({**BASE, "consistency": "strict"}, "consistency", "reading takes watermark, none"),
        ({**BASE, "maxoffsetspertrigger": "-5"}, "maxoffsetspertrigger", "offsets above 0"),
        ({**BASE, "schema-evolution": "add"}, "schema-evolution", "fail, ignore-new-columns"),
        ({**BASE, "broker-timeout-ms": "soon"}, "broker-timeout-ms", "milliseconds above 0"),
        ({**BASE, "failondataloss": "maybe"}, "failondataloss", "use true or false"),
        ({**BASE, "enable-tidb-extension": "yes"}, "enable-tidb-extension", "true or false"),
        ({**BASE, "partition-num": "0"}, "partition-num", "partition-num, above 0"),
    ],
)
def test_errors_name_the_option(options: dict[str, str], option: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        ReadConfig.from_options(options)
    assert caught.value.option == option
    assert str(caught.value).startswith("ticdc: ")


def test_the_reading_guide_renders_the_declarations() -> None:
    # Its table is READ_OPTIONS rendered (tests/support/option_docs.py), as the reference
    # page's is: the guide's first section holds the generated part, no table of its own.
    guide = (paths.DOCS / "guides/reading.md").read_text()
    section = guide.split("\n## ", 1)[0]
    assert "\n<!-- generated: read-options -->\n" in section
    assert "| `" not in section


def _documented(option: ReadOption) -> str | None:
    found = re.fullmatch(r"`([^`]*)`", option.default)
    return found[1] if found else None


@pytest.mark.parametrize(
    "option", [o for o in READ_OPTIONS if o.parse is not None], ids=lambda o: o.name
)
def test_each_documented_default_is_the_default_read(option: ReadOption) -> None:
    assert option.field is not None
    default = attrs.fields_dict(ReadConfig)[option.field].default
    shown = _documented(option)
    if shown is None:  # no default, or one that depends on the read (startingOffsets)
        assert default is None
    else:
        assert option.parse(option.key, shown) == default


def test_each_name_is_declared_once_and_spelled_as_spark_spells_it() -> None:
    names = [n.lower() for o in READ_OPTIONS for n in (o.name, *o.aliases)]
    assert len(names) == len(set(names))
    spelled = {n for o in READ_OPTIONS for n in (o.name, *o.aliases)}
    assert {"startingOffsets", "subscribePattern", "kafkaConsumer.pollTimeoutMs"} <= spelled
    assert {o.field for o in READ_OPTIONS if o.field} <= set(attrs.fields_dict(ReadConfig))


def test_topic_takes_a_comma_separated_list_and_topic_pattern_a_regex() -> None:
    config = ReadConfig.from_options({**BASE, "topic": " a, b ,c"})
    assert (config.topics, config.topic_pattern, config.named_topics) == (
        ("a", "b", "c"),
        None,
        "topics a, b, c",
    )
    assert select_topics(config, ["z"]) == ("a", "b", "c")  # named: not matched
    scoped = config.for_topic("b")
    assert (scoped.topic, scoped.topics, scoped.topic_pattern) == ("b", ("b",), None)
    pattern = ReadConfig.from_options(
        {"kafka.bootstrap.servers": "h:1", "topicPattern": "tidb_(a|b)"}
    )
    assert (pattern.topics, pattern.topic_pattern) == ((), "tidb_(a|b)")
    # The whole name must match, as Spark's subscribePattern (Java's Matcher.matches).
    existing = ["tidb_b", "tidb_a", "tidb_ab", "x_tidb_a"]
    assert select_topics(pattern, existing) == ("tidb_a", "tidb_b")


def test_a_pattern_that_matches_nothing_lists_the_topics_there_are() -> None:
    config = ReadConfig.from_options({"kafka.bootstrap.servers": "h:1", "topicPattern": "cdc_.*"})
    with pytest.raises(ConfigError, match=r"'cdc_\.\*' matches no topic; .* have: a, b$") as caught:
        select_topics(config, ["b", "a"])
    assert caught.value.option == "topicPattern"


def test_a_sink_uri_gives_brokers_topic_and_protocol_settings() -> None:
    uri = (
        "kafka://b1:9092,b2:9092/cdc_orders?protocol=avro&partition-num=6"
        "&enable-tidb-extension=true&max-message-bytes=1048576&sasl-user=reader"
        "&sasl-password=s3cret&sasl-mechanism=plain&required-acks=-1"
        "&schema-registry=http://ru:rp@registry:8081"
    )
    config = ReadConfig.from_options({"sink-uri": uri})
    assert (config.bootstrap_servers, config.topics, config.protocol) == (
        "b1:9092,b2:9092",
        ("cdc_orders",),
        "avro",
    )
    assert (config.registry.url, config.registry.user) == ("http://registry:8081", "ru")
    client = dict(config.client)
    assert (client["sasl.username"], client["sasl.mechanism"]) == ("reader", "PLAIN")
    assert "acks" not in client  # a producer's setting, not passed to a consumer
    assert "s3cret" not in repr(config) and "rp" not in repr(config.registry)


def test_explicit_options_win_over_the_sink_uri_and_the_config_file(tmp_path: Path) -> None:
    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text(
        '[sink]\nprotocol = "simple"\n'
        "[sink.kafka-config.codec-config]\n"
        'encoding-format = "avro"\n'
        "[sink.kafka-config.large-message-handle]\n"
        'large-message-handle-compression = "lz4"\n'
        "claim-check-raw-value = true\n"
        "[mounter]\nworker-num = 4\n"
    )
    config = ReadConfig.from_options(
        {
            "config": str(changefeed),
            "sink-uri": "kafka://h:9092/from_uri?kafka-client-id=reader1",
            "topic": "mine",
            "kafka.client.id": "explicit",
        }
    )
    assert (config.protocol, config.encoding_format, config.compression) == (
        "simple",
        "avro",
        "lz4",
    )
    assert config.claim_check_raw_value and config.topics == ("mine",)
    assert dict(config.client)["client.id"] == "explicit"
    # An explicit topicPattern replaces the sink-uri's topic.
    pattern = ReadConfig.from_options(
        {"sink-uri": "kafka://h:9092/from_uri", "topicPattern": "cdc_.*"}
    )
    assert (pattern.topics, pattern.topic_pattern) == ((), "cdc_.*")


def test_a_writers_option_is_ignored_with_a_note_and_a_typo_stays_an_error() -> None:
    # One option map shared by a write and a read: the writer's options are ignored
    # (listed, for the data source's WARNING), in the sink-uri and given explicitly.
    uri = ReadConfig.from_options({"sink-uri": "kafka://h:9092/t?max-batch-size=9"})
    assert uri.ignored == ()
    shared = {**BASE, "database": "shop", "max-message-bytes": "1048576", "primary-key": "id"}
    config = ReadConfig.from_options({**shared, "Partition": "table"})
    assert config.ignored == ("max-message-bytes", "partition", "primary-key")
    assert config.database == "shop"
    with pytest.raises(ConfigError, match="'max-mesage-bytes' is not a reading option"):
        ReadConfig.from_options({**BASE, "max-mesage-bytes": "1"})
    with pytest.raises(ConfigError, match="did you mean failondataloss"):
        ReadConfig.from_options({**BASE, "failOnDataLos": "false"})


def test_the_writers_settings_that_say_where_watermarks_are_are_reading_options() -> None:
    # enable-tidb-extension and partition-num tell a stream which partitions carry
    # watermarks (TiCDC's kafka-consumer takes partition-num from the sink-uri too).
    config = ReadConfig.from_options(BASE)
    assert (config.tidb_extension, config.partition_num, config.ignored) == (False, None, ())
    config = ReadConfig.from_options(
        {**BASE, "enable-tidb-extension": "true", "partition-num": "3"}
    )
    assert (config.tidb_extension, config.partition_num, config.ignored) == (True, 3, ())
    uri = "kafka://h:9092/t?protocol=canal-json&enable-tidb-extension=true&partition-num=2"
    config = ReadConfig.from_options({"sink-uri": uri})
    assert (config.tidb_extension, config.partition_num) == (True, 2)


def test_timeouts_and_data_loss() -> None:
    config = ReadConfig.from_options(BASE)
    assert (config.broker_timeout_s, config.poll_timeout_s) == (30.0, 120.0)
    assert config.fail_on_data_loss
    config = ReadConfig.from_options(
        {**BASE, "broker-timeout-ms": "1500", "failOnDataLoss": "FALSE"}
    )
    assert (config.broker_timeout_s, config.fail_on_data_loss) == (1.5, False)


def test_spark_kafka_source_names_for_the_topics() -> None:
    # subscribe and subscribePattern are topic and topicPattern (Spark's names for them).
    subscribed = ReadConfig.from_options({"kafka.bootstrap.servers": "h:1", "subscribe": "a, b"})
    assert (subscribed.topics, subscribed.topic_pattern) == (("a", "b"), None)
    pattern = ReadConfig.from_options(
        {"kafka.bootstrap.servers": "h:1", "subscribePattern": "c_.*"}
    )
    assert (pattern.topics, pattern.topic_pattern) == ((), "c_.*")
    # An explicit subscribe wins over a sink-uri's topic, as an explicit topic does.
    uri = ReadConfig.from_options({"sink-uri": "kafka://h:9092/from_uri", "subscribe": "mine"})
    assert uri.topics == ("mine",)


def test_assign_names_the_partitions_read() -> None:
    config = ReadConfig.from_options(
        {"kafka.bootstrap.servers": "h:1", "assign": '{"b": [2, 0], "a": [1]}'}
    )
    assert (config.topics, config.topic_pattern) == (("b", "a"), None)
    assert config.assign == (("a", 1), ("b", 0), ("b", 2))
    assert ReadConfig.from_options(BASE).assign == ()
    # An explicit assign wins over a sink-uri's topic.
    uri = ReadConfig.from_options({"sink-uri": "kafka://h:9092/from_uri", "assign": '{"x": [0]}'})
    assert (uri.topics, uri.assign) == (("x",), (("x", 0),))


def test_timestamp_options_and_their_precedence() -> None:
    config = ReadConfig.from_options(BASE)
    assert (config.starting_option, config.ending_option) == ("startingOffsets", "endingOffsets")
    assert not (config.include_headers or config.starting_timestamp_latest)
    by_partition = '{"t": {"0": 1000}}'
    # Spark's precedence: the timestamp, then by timestamp, then offsets.
    config = ReadConfig.from_options(
        {
            **BASE,
            "startingOffsets": "earliest",
            "startingOffsetsByTimestamp": by_partition,
            "endingOffsets": "latest",
            "endingOffsetsByTimestamp": by_partition,
            "startingOffsetsByTimestampStrategy": "LATEST",
            "includeHeaders": "true",
        }
    )
    assert (config.starting_option, config.ending_option) == (
        "startingOffsetsByTimestamp",
        "endingOffsetsByTimestamp",
    )
    assert config.starting_offsets_by_timestamp == by_partition
    assert config.starting_timestamp_latest and config.include_headers
    config = attrs.evolve(config, starting_timestamp=5, ending_timestamp=9)
    assert (config.starting_option, config.ending_option) == (
        "startingTimestamp",
        "endingTimestamp",
    )
    parsed = ReadConfig.from_options({**BASE, "startingTimestamp": " 5 ", "endingTimestamp": "5"})
    assert (parsed.starting_timestamp, parsed.ending_timestamp) == (5, 5)
