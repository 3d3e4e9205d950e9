"""`ticdc-version`: what TiCDC v8.5 lacks is refused under 8.5, naming the option and the
version; `check` and `dry-run` show the version and what follows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ticdc_sink.cli import main
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.ticdc_version import TiCDCVersion

BASE = {"kafka.bootstrap.servers": "k:9092", "topic": "t"}
ROUTED = json.dumps([{"matcher": ["shop.*"], "target-schema": "dw"}])
TABLE_ROUTED = json.dumps([{"matcher": ["shop.*"], "target-table": "{table}_v"}])


def _config(**options: str) -> SinkConfig:
    return SinkConfig.from_options({**BASE, **options})


@pytest.mark.parametrize(
    ("options", "option", "value"),
    [
        (
            {"protocol": "debezium-avro", "schema-registry": "http://r:8081"},
            "protocol",
            "debezium-avro",
        ),
        (
            {
                "protocol": "avro",
                "schema-registry": "http://r:8081",
                "avro-include-before-value": "true",
            },
            "avro-include-before-value",
            "true",
        ),
        (
            {"protocol": "canal-json", "enable-tidb-extension": "true", "output-row-key": "true"},
            "output-row-key",
            "true",
        ),
        ({"dispatchers": ROUTED}, "dispatchers target-schema", "dw"),
        ({"dispatchers": TABLE_ROUTED}, "dispatchers target-table", "{table}_v"),
    ],
)
def test_what_v8_5_lacks_is_refused_naming_the_option_and_the_version(
    options: dict[str, str], option: str, value: str
) -> None:
    _config(**options)  # the default, 26.3, takes it
    with pytest.raises(ConfigError) as caught:
        _config(**options, **{"ticdc-version": "8.5"})
    message = str(caught.value)
    assert caught.value.option == option and caught.value.value == value
    assert f"option '{option}' is '{value}', which TiCDC v8.5 does not have" in message
    assert "option 'ticdc-version' is '8.5'; set ticdc-version=26.3" in message


def test_the_default_is_the_newest_and_8_5_keeps_the_rest() -> None:
    assert _config().codec.ticdc_version is TiCDCVersion.V26_3 is list(TiCDCVersion)[-1]
    old = _config(**{"ticdc-version": "8.5", "protocol": "debezium"})
    assert old.codec.ticdc_version is TiCDCVersion.V8_5
    assert not old.codec.sends_ddl
    # Options at their defaults are no refusal.
    _config(**{"ticdc-version": "8.5", "output-row-key": "false"})


def test_an_unknown_version_names_the_values() -> None:
    with pytest.raises(ConfigError, match="ticdc-version") as caught:
        _config(**{"ticdc-version": "9.0"})
    assert caught.value.allowed == ("8.5", "26.3")


def test_the_sink_uri_and_the_changefeed_file_set_it_too(tmp_path: Path) -> None:
    uri = SinkConfig.from_options({"sink-uri": "kafka://k:9092/t?ticdc-version=8.5"})
    assert uri.codec.ticdc_version is TiCDCVersion.V8_5
    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text('[sink]\nprotocol = "debezium"\nticdc-version = "8.5"\n')
    toml = _config(config=str(changefeed))
    assert toml.codec.ticdc_version is TiCDCVersion.V8_5 and not toml.codec.sends_ddl


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _args(*options: str) -> list[str]:
    return [a for o in ("kafka.bootstrap.servers=k:9092", "topic=t", *options) for a in ("-o", o)]


@pytest.mark.parametrize(
    ("version", "follows"),
    [("8.5", "no"), ("26.3", "yes")],
)
def test_check_shows_the_version_and_what_follows_it(
    capsys: pytest.CaptureFixture[str], version: str, follows: str
) -> None:
    out = _run(capsys, "check", *_args("protocol=debezium", f"ticdc-version={version}"))
    shown = {"8.5": "8.5", "26.3": "26.3 (default)"}[version]
    assert f"  ticdc-version: {shown}\n" in out
    assert f"TiCDC v{version} messages (ticdc-version); following it:\n" in out
    assert "  debezium from TiCDC v26.3: DDL messages, watermarks with enable-tidb-extension" in out
    assert out.split("(pkg/sink/codec/debezium/codec.go): ", 1)[1].startswith(follows + "\n")
    refused = (
        "  refused (not in TiCDC v8.5): protocol debezium-avro, avro-include-before-value, "
        "output-row-key, dispatchers target-schema / target-table\n"
    )
    assert (refused in out) == (version == "8.5")


def test_dry_run_shows_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    ddl = "CREATE TABLE shop.u (id int PRIMARY KEY)"
    out = _run(capsys, "dry-run", "--table-ddl", ddl, *_args("protocol=canal-json"))
    assert "TiCDC v26.3 messages (ticdc-version); following it:\n" in out
