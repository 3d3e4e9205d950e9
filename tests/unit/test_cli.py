"""`ticdc-sink dry-run` and `check`: no broker, no registry; errors exit 2 with one line."""

from __future__ import annotations

import json
import zlib

import pytest

from ticdc_sink.cli import main

DDL = (
    "CREATE TABLE shop.users (id bigint PRIMARY KEY, name varchar(20), "
    "score decimal(5,2), seen timestamp(3) NULL, tags set('a','b'))"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("protocol", "extra", "kinds", "none"),
    [
        ("simple", [], ["INSERT", "UPDATE", "DELETE", "BOOTSTRAP", "DDL", "WATERMARK"], []),
        ("simple", ["-o", "encoding-format=avro"], ["INSERT", "BOOTSTRAP", "WATERMARK"], []),
        (
            "avro",
            ["-o", "schema-registry=http://registry:8081"],
            ["INSERT", "DELETE"],
            ["BOOTSTRAP", "DDL", "WATERMARK"],
        ),
        ("debezium", [], ["INSERT", "UPDATE", "DELETE", "DDL", "WATERMARK"], ["BOOTSTRAP"]),
        ("canal-json", [], ["INSERT", "UPDATE", "DELETE", "DDL", "WATERMARK"], ["BOOTSTRAP"]),
    ],
)
def test_dry_run_prints_every_kind_the_protocol_sends(capsys, protocol, extra, kinds, none):
    code, out, err = run(
        capsys,
        "dry-run",
        "--table-ddl",
        DDL,
        "-o",
        f"protocol={protocol}",
        "-o",
        "enable-tidb-extension=true",
        *extra,
    )
    assert code == 0, err
    assert out.startswith(f"protocol {protocol}, topic shop_users, table shop.users")
    sections = {part.split("\n", 1)[0].split()[0]: part for part in out.split("\n== ")[1:]}
    for kind in kinds:
        assert "value:" in sections[kind], kind
    for kind in none:
        assert "sends none" in sections[kind], kind
    if protocol == "avro":
        assert "Avro schema id 2" in out and '"namespace":"default.shop"' in out
        assert "decoded: INSERT shop.users" in out
    if "encoding-format=avro" in extra:
        assert "decoded: BOOTSTRAP shop.users" in out


def test_dry_run_from_a_column_list(capsys):
    columns = json.dumps(
        [{"name": "id", "type": "int", "key": True}, {"name": "v", "type": "json"}]
    )
    code, out, _ = run(capsys, "dry-run", "--columns", columns, "-o", "protocol=debezium")
    assert code == 0
    assert '"payload":{"id":1}' in out and '{\\"a\\": 1}' in out


def test_check_prints_the_configuration_without_secrets_and_the_routing(capsys):
    code, out, err = run(
        capsys,
        "check",
        "--sink-uri",
        "kafka://b1:9092/t_{schema}_{table}?partition=index-value&sasl-password=TopSecret1",
        "-o",
        "sasl-user=me",
        "--table-ddl",
        DDL,
        "--table",
        "shop.users",
        "--table",
        "other.t",
        "--key",
        "id=42",
        "--partitions",
        "6",
    )
    assert code == 0, err
    assert "TopSecret1" not in out
    assert '"sasl.password": "***"' in out
    expected = (zlib.crc32(b"shopusers") ^ zlib.crc32(b"id42")) % 6
    assert (
        f"table shop.users -> topic t_shop_users\n  key id=42 -> partition {expected} of 6" in out
    )
    assert "table other.t -> topic t_other_t" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check", "-o", "protocol=avro"], "option 'schema-registry' is not set"),
        (["check", "-o", "partition=hash"], "option 'partition' is 'hash'"),
        (["check", "-o", "nonsense"], "give NAME=VALUE"),
        (["dry-run"], "give the table"),
        (["dry-run", "--table-ddl", "CREATE TABLE t (x nosuchtype)"], "cannot parse table-ddl"),
        (["check", "--table", "shop.users", "--key", "id=1"], "--key needs the table's columns"),
        (["check", "--config", "/no/such/file.toml"], "cannot be read"),
    ],
)
def test_errors_exit_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1


def test_check_reports_ignored_settings(capsys, tmp_path):
    f = tmp_path / "cf.toml"
    f.write_text("[mounter]\nworker-num = 4\n[sink]\nprotocol = 'canal-json'\n")
    code, out, _ = run(
        capsys, "check", "--config", str(f), "-o", "topic=t", "-o", "kafka.bootstrap.servers=b:1"
    )
    assert code == 0
    assert f"ignored (no meaning for this sink): config file {f} [mounter]" in out
    assert '"protocol": "canal-json"' in out
