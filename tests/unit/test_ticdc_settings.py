"""Every TiCDC Kafka-sink setting is honoured or refused by name, never silently taken
(issue 16 items 6 and 7): the settings of ticdc_sink.ticdc_settings, as config applies
them. TiCDC's own rules are quoted from tiflow v8.5 (pkg/config/sink.go,
pkg/sink/kafka/options.go) and pingcap/ticdc (pkg/config/sink.go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_sink.config import CorruptionHandleLevel, IntegrityCheckLevel, SinkConfig, is_secret
from ticdc_sink.errors import ConfigError
from ticdc_sink.ticdc_settings import SETTINGS, Fate, setting
from ticdc_sink.writer import rules as writer_rules

BASE = {"kafka.bootstrap.servers": "broker:9092", "topic": "orders"}


def error(options: dict[str, str]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        SinkConfig.from_options({**BASE, **options})
    return info.value


def toml(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "changefeed.toml"
    path.write_text(text)
    return {"config": str(path)}


# -- max-retry: sarama's Producer.Retry.Max, as librdkafka's retries -----------------------


def test_max_retry_is_librdkafkas_message_send_max_retries() -> None:
    c = SinkConfig.from_options({**BASE, "sink-uri": "kafka://b:9092/t?max-retry=3"})
    assert c.kafka.client_config["message.send.max.retries"] == "3"
    assert c.kafka.producer_config()["message.send.max.retries"] == "3"


def test_a_negative_max_retry_keeps_ticdcs_default_of_5() -> None:
    # tiflow options.go: `if *urlParameter.MaxRetry >= 0 { o.MaxRetry = ... }`, default 5.
    c = SinkConfig.from_options({**BASE, "max-retry": "-1"})
    assert c.kafka.client_config["message.send.max.retries"] == "5"


def test_max_retry_0_needs_a_producer_that_is_not_idempotent() -> None:
    e = error({"max-retry": "0"})
    assert str(e).splitlines()[0] == (
        "ticdc: option 'max-retry' is '0'; use 1 or more: the sink's producer is idempotent "
        "(kafka.enable.idempotence), which needs retries; or set kafka.enable.idempotence=false"
    )
    c = SinkConfig.from_options({**BASE, "max-retry": "0", "kafka.enable.idempotence": "false"})
    assert c.kafka.client_config["message.send.max.retries"] == "0"


def test_max_retry_must_be_an_integer() -> None:
    assert error({"max-retry": "many"}).option == "max-retry"


# -- settings with no equivalent here: refused by name, with the reason ---------------------


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("sasl-gssapi-password", "hunter2", "logs in to Kerberos with a keytab"),
        ("sasl-gssapi-kerberos-config-path", "/etc/krb5.conf", "KRB5_CONFIG"),
        ("sasl-gssapi-disable-pafxfast", "true", "gokrb5"),
        ("sasl-oauth-audience", "kafka", "no audience parameter"),
        ("send-all-bootstrap-at-start", "true", "when a changefeed starts"),
        ("avro-enable-watermark", "true", "testing mode"),
        ("glue-schema-registry-config", '{"region": "x"}', "AWS Glue"),
    ],
)
def test_settings_without_an_equivalent_are_refused_with_why(name, value, reason) -> None:
    e = error({"sink-uri": f"kafka://b:9092/t?{name}={value}"})
    first = str(e).splitlines()[0]
    assert first.startswith(
        f"ticdc: sink-uri parameter '{name}' is a TiCDC setting this sink does not support ("
    )
    assert reason in first and first.endswith("; remove it")
    assert e.option == name
    if is_secret(name):
        assert value not in str(e)


def test_refused_settings_at_ticdcs_default_are_accepted(tmp_path: Path) -> None:
    # As a changefeed file TiCDC exported lists them.
    options = toml(
        tmp_path,
        "[sink]\nsend-all-bootstrap-at-start = false\ntransaction-atomicity = 'none'\n"
        "column-selectors = []\n"
        "[sink.kafka-config]\nsasl-gssapi-disable-pafxfast = false\nsasl-oauth-audience = ''\n"
        "sasl-gssapi-kerberos-config-path = ''\noutput-raw-change-event = false\n"
        "[sink.kafka-config.glue-schema-registry-config]\nregion = ''\nregistry-name = ''\n"
        "[sink.kafka-config.codec-config]\navro-include-before-value = false\n"
        "output-row-key = false\n"
        "[sink.kafka-config.large-message-handle]\nlarge-message-handle-compression = 'none'\n"
        "[filter]\nrules = ['*.*']\nignore-txn-start-ts = []\n"
        "[integrity]\nintegrity-check-level = 'none'\ncorruption-handle-level = 'warn'\n",
    )
    c = SinkConfig.from_options({**BASE, **options})
    assert c == SinkConfig.from_options(BASE)


def test_sasl_gssapi_auth_type_user_is_refused() -> None:
    e = error({"sasl-gssapi-auth-type": "user", "sasl-gssapi-user": "cdc"})
    assert "use keytab (librdkafka logs in with a keytab, not a password)" in str(e)


# -- issue 16 item 7: where TiCDC errors, so does the sink ---------------------------------


def test_transaction_atomicity_table_is_an_error_on_kafka_as_in_ticdc() -> None:
    # tiflow AtomicityLevel.validate: "table level atomicity is not supported by kafka scheme"
    e = error({"sink-uri": "kafka://b:9092/t?transaction-atomicity=table"})
    assert "table level atomicity is not supported by kafka scheme" in str(e)
    assert e.option == "transaction-atomicity"
    for accepted in ("none", "", "NONE"):
        SinkConfig.from_options({**BASE, "transaction-atomicity": accepted})


def test_a_rule_with_dispatcher_and_partition_is_an_error_as_in_ticdc(tmp_path: Path) -> None:
    # tiflow SinkConfig.validateAndAdjust: "dispatcher and partition cannot be configured both"
    both = "dispatcher and partition cannot be configured both (TiCDC's rule)"
    rules = '[{"matcher": ["db.*"], "dispatcher": "ts", "partition": "table"}]'
    e = error({"dispatchers": rules})
    assert both in str(e) and e.option == "dispatchers"
    # A single catch-all rule in the file becomes the partition option: checked too.
    options = toml(
        tmp_path, "[sink]\ndispatchers = [{matcher = ['*.*'], dispatcher = 'ts', partition = 'ts'}]"
    )
    assert both in str(error(options))
    # Either one alone is the partition rule.
    c = SinkConfig.from_options(
        {**BASE, "dispatchers": '[{"matcher": ["db.*"], "dispatcher": "ts"}]'}
    )
    assert c.routing.dispatchers[0].partition.value == "ts"


@pytest.mark.parametrize("key", ["target-schema", "target-table"])
def test_table_routing_keys_of_a_rule_are_honoured(tmp_path: Path, key) -> None:
    # pingcap/ticdc's table routing (tests/unit/test_table_routing.py): no longer refused.
    rules = f'[{{"matcher": ["db.*"], "topic": "t", "{key}": "{{schema}}_bak"}}]'
    c = SinkConfig.from_options({**BASE, "dispatchers": rules})
    assert "db_bak" in writer_rules.target_of(c.routing, "db", "db")
    options = toml(tmp_path, f"[sink]\ndispatchers = [{{matcher = ['*.*'], {key} = 'x'}}]")
    routing = SinkConfig.from_options({**BASE, **options}).routing
    assert "x" in writer_rules.target_of(routing, "a", "b")
    empty = f'[{{"matcher": ["db.*"], "topic": "t", "{key}": ""}}]'
    c = SinkConfig.from_options({**BASE, "dispatchers": empty})
    assert writer_rules.target_of(c.routing, "db", "t") == ("db", "t")


# -- changefeed sections that change TiCDC's output ---------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[filter]\nignore-txn-start-ts = [42]\n", "[filter] key 'ignore-txn-start-ts'"),
    ],
)
def test_filter_settings_are_refused_by_name(tmp_path: Path, text, key) -> None:
    e = error(toml(tmp_path, text))
    assert f"{key} is a TiCDC setting this sink does not support" in str(e)


# -- [integrity]: row checksums -------------------------------------------------------------


def test_integrity_section_becomes_the_options(tmp_path: Path) -> None:
    text = "[integrity]\nintegrity-check-level = 'correctness'\ncorruption-handle-level = 'error'\n"
    c = SinkConfig.from_options({**BASE, **toml(tmp_path, text)})
    assert c.codec.integrity_check_level is IntegrityCheckLevel.CORRECTNESS
    assert c.codec.corruption_handle_level is CorruptionHandleLevel.ERROR
    assert c.codec.row_checksum


def test_checksums_in_simple_avro() -> None:
    options = {"protocol": "simple", "encoding-format": "avro"}
    assert SinkConfig.from_options(
        {**BASE, **options, "integrity-check-level": "correctness"}
    ).codec.row_checksum


_AVRO = {"protocol": "avro", "schema-registry": "http://r:8081", "topic": "{schema}_{table}"}
_AVRO_CHECKSUM = {
    **_AVRO,
    "integrity-check-level": "correctness",
    "enable-tidb-extension": "true",
    "avro-decimal-handling-mode": "string",
    "avro-bigint-unsigned-handling-mode": "string",
}


def test_checksums_in_avro_with_ticdcs_settings() -> None:
    assert SinkConfig.from_options({**BASE, **_AVRO_CHECKSUM}).codec.row_checksum


@pytest.mark.parametrize(
    ("option", "value", "wanted"),
    [
        ("enable-tidb-extension", "false", "true"),
        ("avro-decimal-handling-mode", "precise", "string"),
        ("avro-bigint-unsigned-handling-mode", "long", "string"),
    ],
)
def test_checksums_in_avro_need_ticdcs_settings(option: str, value: str, wanted: str) -> None:
    # tiflow common.Config.Validate refuses the row checksum with any other avro setting
    e = error({**BASE, **_AVRO_CHECKSUM, option: value})
    assert (e.option, e.value) == (option, value)
    first = str(e).splitlines()[0]
    assert f"option {option!r} is {value!r}; protocol avro writes the row checksum" in first
    assert f"set {option}={wanted}, or integrity-check-level=none" in first


def test_checksums_in_avro_name_every_setting_to_change() -> None:
    e = error({**BASE, **_AVRO, "integrity-check-level": "correctness"})
    assert e.option == "enable-tidb-extension"
    assert (
        "set enable-tidb-extension=true, avro-decimal-handling-mode=string and "
        "avro-bigint-unsigned-handling-mode=string, or integrity-check-level=none"
    ) in str(e)


@pytest.mark.parametrize("protocol", ["debezium", "debezium-avro", "canal-json", "open-protocol"])
def test_checksums_mean_nothing_to_protocols_without_them(protocol: str) -> None:
    # TiCDC v8.5 writes no checksum in these protocols' messages (nor v26.3 in
    # debezium-avro's): the setting is ignored
    registry = {"schema-registry": "http://r:8081"} if protocol == "debezium-avro" else {}
    c = SinkConfig.from_options(
        {**BASE, **registry, "protocol": protocol, "integrity-check-level": "correctness"}
    )
    assert not c.codec.row_checksum
    assert any("integrity-check-level" in label for label in c.ignored)


def test_integrity_check_level_takes_ticdcs_values() -> None:
    e = error({**BASE, "integrity-check-level": "strict"})
    assert "'integrity-check-level'" in str(e) and "correctness" in str(e)


# -- the declarations -----------------------------------------------------------------------


def test_settings_are_declared_once_with_a_reason() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert all(s.note.strip() and "|" not in s.note for s in SETTINGS)
    assert setting("max-retry") is not None and setting("max-retry").fate is Fate.LIBRDKAFKA
    assert setting("no-such-setting") is None


# -- [filter]: rules and event-filters are honoured ---------------------------------------


def test_filter_section_becomes_the_row_filter(tmp_path: Path) -> None:
    text = (
        "case-sensitive = true\n[filter]\nrules = ['db.*', '!db.tmp_*']\n"
        "[[filter.event-filters]]\nmatcher = ['db.orders']\nignore-event = ['delete']\n"
        'ignore-insert-value-expr = "price > 100"\n'
        "[sink]\nddl-on-schema-change = false\n"
    )
    config = SinkConfig.from_options({**BASE, **toml(tmp_path, text)})
    row_filter = writer_rules.row_filter(config)
    assert row_filter.rules == ("db.*", "!db.tmp_*") and row_filter.case_sensitive
    (rule,) = row_filter.event_filters
    assert rule.matcher == ("db.orders",) and rule.ignore_event == ("delete",)
    assert rule.ignore_insert_value_expr == "price > 100"
    assert row_filter.active
    assert not any("[filter]" in name for name in config.ignored)


def test_filter_options_as_text() -> None:
    config = SinkConfig.from_options(
        {
            **BASE,
            "filter-rules": "db.*,!db.tmp",
            "event-filters": '[{"matcher": ["db.t"], "ignore-event": ["insert"]}]',
        }
    )
    assert config.filter_rules == ("db.*", "!db.tmp")
    assert config.event_filters[0].ignore_event == ("insert",)
    # TiCDC's default, as an exported changefeed file lists it
    config = SinkConfig.from_options({**BASE, "filter-rules": '["*.*"]'})
    assert not writer_rules.row_filter(config).active


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"filter-rules": "nodot"}, "option 'filter-rules'"),
        ({"filter-rules": "[db.*"}, "use a JSON list of patterns"),
        ({"event-filters": "{not json"}, "use a JSON list of rules"),
        (
            {"event-filters": '[{"matcher": ["db.t"], "ignore-event": ["drop table"]}]'},
            "does not filter the DDL messages it sends yet",
        ),
        (
            {"event-filters": '[{"matcher": ["db.t"], "ignore-sql": ["^DROP"]}]'},
            "'^DROP'",
        ),
    ],
)
def test_bad_filter_options(options: dict[str, str], message: str) -> None:
    assert message in str(error({**BASE, **options}))


def test_ddl_parts_are_accepted_while_no_ddl_is_sent() -> None:
    config = SinkConfig.from_options(
        {
            **BASE,
            "ddl-on-schema-change": "false",
            "event-filters": '[{"matcher": ["db.t"], "ignore-event": ["drop table"]}]',
        }
    )
    assert config.event_filters[0].ddl_parts == ("drop table",)
