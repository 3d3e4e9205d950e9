"""`ticdc-sink dry-run`, `check` and `reports`, and the argument errors of `decode`: no
broker, no registry; errors exit 2 with one line."""

from __future__ import annotations

import json
import sys
import zlib

import pytest

from tests.support import paths
from ticdc_sink.cli import main
from ticdc_sink.state import SinkState

DDL = (
    "CREATE TABLE shop.users (id bigint PRIMARY KEY, name varchar(20), "
    "score decimal(5,2), seen timestamp(3) NULL, tags set('a','b'))"
)
OPTIONS_HELP = "(all options: docs/reference/write-options.md)"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def sections(out: str) -> dict[str, str]:
    return {part.split("\n", 1)[0].split()[0]: part for part in out.split("\n== ")[1:]}


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
        (
            "debezium",
            ["-o", "ticdc-version=8.5"],
            ["INSERT", "UPDATE", "DELETE"],
            ["BOOTSTRAP", "DDL", "WATERMARK"],
        ),
        ("canal-json", [], ["INSERT", "UPDATE", "DELETE", "DDL", "WATERMARK"], ["BOOTSTRAP"]),
        ("open-protocol", [], ["INSERT", "UPDATE", "DELETE", "DDL", "WATERMARK"], ["BOOTSTRAP"]),
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
    found = sections(out)
    for kind in kinds:
        assert "value:" in found[kind], kind
    for kind in none:
        assert "sends none" in found[kind], kind
    if protocol == "avro":
        assert "Avro schema id 2" in out and '"namespace":"default.shop"' in out
        assert "decoded: INSERT shop.users" in out
        assert "decoded: UPDATE shop.users" in out  # the TiDB extension carries _tidb_op
    if "encoding-format=avro" in extra:
        assert "decoded: BOOTSTRAP shop.users" in out


def test_dry_run_shows_the_selected_columns_and_the_whole_table_in_bootstrap(capsys):
    selectors = json.dumps([{"matcher": ["shop.*"], "columns": ["id"]}])
    code, out, err = run(
        capsys, "dry-run", "--table-ddl", DDL, "-o", f"column-selectors={selectors}"
    )
    assert code == 0, err
    found = sections(out)
    assert '"data":{"id":' in found["INSERT"] and '"name"' not in found["INSERT"]
    assert '"name":"name"' in found["BOOTSTRAP"]


def test_dry_run_of_open_protocol_shows_the_framing_and_the_batching(capsys):
    code, out, err = run(capsys, "dry-run", "--table-ddl", DDL, "--protocol", "open-protocol")
    assert code == 0, err
    assert (
        "merges a partition's consecutive events into one message, up to max-batch-size=16" in out
    )
    update = sections(out)["UPDATE"]
    assert 'key:   00000000 00000001 | 00000000 0000003a | {"ts":' in update
    assert "decoded: UPDATE shop.users" in update
    watermark = sections(out)["WATERMARK"]
    assert "value: 00000000 00000000 |\n" in watermark


def test_dry_run_from_a_column_list(capsys):
    columns = json.dumps(
        [{"name": "id", "type": "int", "key": True}, {"name": "v", "type": "json"}]
    )
    code, out, _ = run(capsys, "dry-run", "--columns", columns, "-o", "protocol=debezium")
    assert code == 0
    assert '"payload":{"id":1}' in out and '{\\"a\\": 1}' in out


def test_dry_run_of_avro_needs_no_registry_and_says_why_an_update_reads_as_insert(capsys):
    code, out, err = run(capsys, "dry-run", "--table-ddl", DDL, "--protocol", "avro")
    assert code == 0, err
    assert "(no schema-registry given: schema ids are numbered here" in out
    update = sections(out)["UPDATE"]
    assert "decoded: INSERT shop.users" in update
    assert (
        "(the UPDATE decodes as INSERT: protocol avro carries no operation without "
        "enable-tidb-extension=true (which adds the _tidb_op field))" in update
    )


def test_dry_run_with_claim_check_shows_the_file_and_writes_nothing(capsys, tmp_path):
    storage = tmp_path / "claim-check"
    code, out, err = run(
        capsys,
        "dry-run",
        "--table-ddl",
        "CREATE TABLE shop.t (id bigint PRIMARY KEY, "
        + ", ".join(f"c{i} text" for i in range(20))
        + ")",
        "-o",
        "large-message-handle-option=claim-check",
        "-o",
        f"claim-check-storage-uri=file://{storage}",
        "-o",
        "max-message-bytes=700",  # the UPDATE has ~950 bytes, its key-only message ~330 + path
    )
    assert code == 0, err
    found = sections(out)
    assert '"claimCheckLocation":"file://' in found["UPDATE"]
    assert "(above max-message-bytes: sent as claim-check)" in found["UPDATE"]
    assert "decoded: UPDATE shop.t" in found["UPDATE"]
    assert "the writer refuses it: ticdc: message for table shop.t" in found["BOOTSTRAP"]
    assert f"== claim-check file file://{storage}/" in out
    assert not storage.exists()


def test_dry_run_pretty_prints_json_on_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "dry-run", "--table-ddl", DDL, "--protocol", "canal-json")
    assert code == 0
    insert = sections(out)["INSERT"]
    assert '   value: {\n     "id": 0,\n     "database": "shop",' in insert
    assert '"sqlType": {\n       "id": -5,' in insert
    assert '"score": "12.55"' in insert  # values exactly as written


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
    assert "  kafka.sasl.password: ***\n" in out
    expected = (zlib.crc32(b"shopusers") ^ zlib.crc32(b"id42")) % 6
    assert (
        "table shop.users -> topic t_shop_users (partition rule index-value, from options "
        "topic and partition)\n  partition hashes the table name and id\n"
        f"  key id=42 -> partition {expected} of 6\n"
    ) in out
    assert "table other.t -> topic t_other_t" in out


def test_check_names_options_with_their_resolved_values(capsys):
    code, out, _ = run(capsys, "check", "--sink-uri", "kafka://b1:9092/orders?protocol=debezium")
    assert code == 0
    lines = out.splitlines()
    assert "  kafka.bootstrap.servers: b1:9092" in lines
    assert "  topic: orders" in lines
    assert "  protocol: debezium" in lines
    assert "  max-message-bytes: 10485760 (default)" in lines
    assert any(line.startswith("  partition-num: 3 (default") for line in lines)
    assert "  checkpointLocation: (not set)" in lines
    assert "  kafka.acks: all" in lines
    assert "partition_num" not in out and "bootstrap_servers" not in out


def test_the_readme_check_example_works(capsys, tmp_path):
    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text('[sink]\nprotocol = "canal-json"\n')
    code, out, err = run(
        capsys,
        "check",
        "--config",
        str(changefeed),
        "--sink-uri",
        "kafka://b1:9092/orders?partition-num=6&partition=index-value",
        "--table",
        "db.t",
        "--key",
        "id=42",
    )
    assert code == 0, err
    expected = (zlib.crc32(b"dbt") ^ zlib.crc32(b"id42")) % 6
    assert "(no --table-ddl or --columns: the --key columns are taken as the key)" in out
    assert f"  key id=42 -> partition {expected} of 6 (partition-num)" in out


RULES = json.dumps([{"matcher": ["shop.*"], "topic": "rule_{table}", "partition": "index-value"}])


def test_check_and_dry_run_route_by_the_dispatchers_as_the_writer_does(capsys, tmp_path):
    code, out, err = run(
        capsys,
        "check",
        "-o",
        f"dispatchers={RULES}",
        "--table-ddl",
        DDL,
        "--table",
        "shop.users",
        "--table",
        "hr.users",
        "--key",
        "id=7",
        "--partitions",
        "4",
    )
    assert code == 0, err
    expected = (zlib.crc32(b"shopusers") ^ zlib.crc32(b"id7")) % 4
    assert (
        "table shop.users -> topic rule_users (partition rule index-value, from dispatchers "
        "rule ['shop.*'])"
    ) in out
    assert f"  key id=7 -> partition {expected} of 4\n" in out
    assert "table hr.users -> topic hr_users (partition rule default" in out

    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text(
        "[sink]\n"
        '[[sink.dispatchers]]\nmatcher = ["shop.*"]\ntopic = "cf_{table}"\npartition = "ts"\n'
        '[[sink.dispatchers]]\nmatcher = ["hr.*"]\ntopic = "hr"\n'
    )
    code, out, err = run(capsys, "dry-run", "--config", str(changefeed), "--table-ddl", DDL)
    assert code == 0, err
    assert out.startswith("protocol simple, topic cf_users, table shop.users, partition rule ts")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--key", "nope=1"], "--key nope=...: table shop.users has no column 'nope'"),
        (
            ["--key", "id=abc"],
            "--key: column 'id' of shop.users: value 'abc' is not an integer in the range of "
            "bigint",
        ),
        (["--key", "score=abc"], "--key: column 'score' of shop.users: value 'abc' is not a"),
        (["--key", "name=x", "-o", "partition=index-value"], "give --key id=VALUE"),
        (["--key", "noequals"], "--key 'noequals': give COLUMN=VALUE"),
        (["--table", "nodot"], "--table 'nodot': give database.table"),
    ],
)
def test_check_key_errors(capsys, argv, fragment):
    code, _, err = run(capsys, "check", "--table-ddl", DDL, *argv)
    assert code == 2
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_check_key_values_are_read_as_the_writer_reads_them(capsys):
    ddl = "CREATE TABLE shop.codes (code varchar(10) PRIMARY KEY, ratio float)"
    base = ["check", "--table-ddl", ddl, "-o", "partition=index-value", "--partitions", "5"]
    code, out, err = run(capsys, *base, "--key", "code=abc")
    assert code == 0, err
    expected = (zlib.crc32(b"shopcodes") ^ zlib.crc32(b"codeabc")) % 5
    assert f"  key code=abc -> partition {expected} of 5" in out
    code, _, err = run(capsys, *base, "--key", "code=abc", "--key", "ratio=x")
    assert code == 2 and "--key ratio=x: column 'ratio' is float; give a number" in err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check", "-o", "protocol=avro"], "option 'schema-registry' is not set"),
        (["check", "-o", "partition=hash"], "option 'partition' is 'hash'"),
        (["check", "-o", "nonsense"], "give NAME=VALUE"),
        (["dry-run"], "give the table"),
        (["dry-run", "--table-ddl", "CREATE TABLE t (x nosuchtype)"], "cannot parse table-ddl"),
        (["check", "--config", "/no/such/file.toml"], "cannot be read"),
        # issue 13: each of these was a raw error, a wrong answer or no error at all
        (["check", "--key", "id=1"], "--key needs the table: --table db.t"),
        (["check", "-o", "partition-num=1000000"], "use an integer from 1 to 100000"),
        (["check", "-o", "replication-factor=20000"], "use an integer from 1 to 10000"),
        (
            ["check", "-o", "checkpointlocaton=/chk"],
            f"option 'checkpointlocaton' is unknown; did you mean 'checkpointLocation'? "
            f"{OPTIONS_HELP}",
        ),
        (
            ["check", "-o", "zzzz=1"],
            "option 'zzzz' is unknown; all options: docs/reference/write-options.md",
        ),
        (["check", "--protocol", "canal_json"], "did you mean 'canal-json'?"),
        (["check", "-o", "key=id"], "option 'key' is 'id'; to choose the Kafka message key"),
        (
            ["check", "--protocol", "simple", "-o", "protocol=debezium"],
            "--protocol simple and -o protocol=debezium disagree; give it once",
        ),
        (
            ["check", "-o", "kafka.bootstrap.server=b:9092"],
            "option 'kafka.bootstrap.server' is unknown; did you mean 'kafka.bootstrap.servers'?",
        ),
        (
            ["check", "--sink-uri", "kafka://b:9092/t", "-o", "kafka.bootstrap.server=b:9092"],
            "option 'kafka.bootstrap.server' is unknown to librdkafka, the Kafka client; did you "
            "mean 'kafka.bootstrap.servers'?",
        ),
        (["check", "-o", "kafka.acks=two"], "option 'kafka.acks' is refused by librdkafka"),
        (
            ["check", "-o", "kafka.sasl.jaas.config=org.apache.Login required password=S3cret;"],
            "option 'kafka.sasl.jaas.config' is a setting of the Java Kafka client",
        ),
        (
            ["check", "-o", "kafka.ssl.truststore.location=/tls/trust.jks"],
            "give the CA certificate as a PEM file in kafka.ssl.ca.location",
        ),
        (["check", "-o", "kafka.max.request.size=2000000"], "use max-message-bytes"),
        (["check", "-o", "kafka.key.serializer=x"], "remove it"),
        (["dry-run", "--columns", '[{"name": "id"}]'], "--columns: column 'id' has no type"),
        (
            [
                "dry-run",
                "--columns",
                '[{"name": "id", "type": "int"}, {"name": "ID", "type": "int"}]',
            ],
            "--columns: column 'ID' is given twice",
        ),
        (["dry-run", "--columns", "[id]"], "--columns is not JSON"),
        (["dry-run", "--columns", '[{"name": "id", "type": "nosuch"}]'], "--columns: a type"),
        (
            ["dry-run", "--columns", '[{"name": "_op", "type": "text"}]'],
            "column '_op' is the name of a metadata column (op-column)",
        ),
        (["dry-run", "--table-ddl", "@/no/such.sql"], "--table-ddl @/no/such.sql: the file"),
        (
            ["demo", "-o", "kafka.bootstrap.servers=b:9092"],
            "the demo sets it itself (use --bootstrap-servers for the brokers",
        ),
        (["demo", "--bootstrap-servers", "b:9092", "-o", "partition=x"], "option 'partition'"),
    ],
)
def test_errors_exit_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1
    assert "S3cret" not in err


def test_a_ddl_file_that_is_not_utf8(capsys, tmp_path):
    ddl = tmp_path / "t.sql"
    ddl.write_bytes("CREATE TABLE t (caf\xe9 int)".encode("latin-1"))
    code, _, err = run(capsys, "dry-run", "--table-ddl", f"@{ddl}")
    assert code == 2 and f"--table-ddl @{ddl}: the file is not UTF-8 text" in err


def test_check_reports_ignored_settings_and_librdkafka_warnings(capsys, tmp_path):
    f = tmp_path / "cf.toml"
    f.write_text("[mounter]\nworker-num = 4\n[sink]\nprotocol = 'canal-json'\n")
    code, out, _ = run(
        capsys,
        "check",
        "--config",
        str(f),
        "-o",
        "topic=t",
        "-o",
        "kafka.bootstrap.servers=b:1",
        "-o",
        "kafka.enable.auto.commit=false",
    )
    assert code == 0
    assert f"ignored (no meaning for this sink): config file {f} [mounter]" in out
    assert "  protocol: canal-json\n" in out
    assert (
        "librdkafka warning: Configuration property enable.auto.commit is a consumer "
        "property and will be ignored by this producer instance"
    ) in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--limit", "-3"], "argument --limit: -3 is not a positive number"),
        (["--limit", "0"], "argument --limit: 0 is not a positive number"),
        (["--partition", "-1"], "argument --partition: -1 is not a partition number (0, 1, ...)"),
        (["--idle", "0"], "argument --idle: 0 is not a positive number of seconds"),
    ],
)
def test_decode_refuses_bad_numbers(capsys, argv, fragment):
    with pytest.raises(SystemExit) as info:
        main(["decode", "--bootstrap-servers", "b:1", "--topic", "t", *argv])
    assert info.value.code == 2
    assert fragment in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["--protocol", "avro"],
            "decode --protocol avro needs --schema-registry URL, the registry the messages were "
            "written with",
        ),
        (["-o", "protocol=flat-avro"], "needs --schema-registry URL"),
        (["--schema-registry", "http://r:8081"], "--schema-registry applies to --protocol avro"),
        (["-o", "partition=table"], "-o partition: decode takes only the options that say how"),
        (["--protocol", "maxwell"], "protocol 'maxwell' has no decoder"),
    ],
)
def test_decode_option_errors_name_the_flags(capsys, argv, fragment):
    # The decoder is made before the broker is asked, so no broker is needed here.
    code, _, err = run(
        capsys, "decode", "--bootstrap-servers", "127.0.0.1:1", "--topic", "t", *argv
    )
    assert code == 2
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_reports_prints_the_kept_batch_reports(capsys, tmp_path):
    state = SinkState(str(tmp_path))
    for batch_id in (0, 1):
        report = {
            "batch_id": batch_id,
            "commit_ts": 445644800000000000 + batch_id,
            "rows": 3 + batch_id,
            "messages": 9,
            "bytes": 2581,
            "watermark": None if batch_id else 445644800000000000,
            "seconds": 1.5,
        }
        state.record_report(str(batch_id), json.dumps(report))
    code, out, _ = run(capsys, "reports", str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "batch",
        "committed",
        "(UTC)",
        "rows",
        "messages",
        "bytes",
        "diverted",
        "watermark",
        "seconds",
    ]
    assert lines[1].split() == [
        "0",
        "2023-11-14",
        "22:13:20",
        "3",
        "9",
        "2581",
        "-",
        "445644800000000000",
        "1.5",
    ]
    assert lines[2].split()[0] == "1" and lines[2].split()[-2:] == ["-", "1.5"]

    code, out, _ = run(capsys, "reports", str(tmp_path), "--format", "jsonl", "--limit", "1")
    assert code == 0
    assert [json.loads(line)["batch_id"] for line in out.splitlines()] == [1]


def test_reports_of_a_location_without_reports(capsys, tmp_path):
    code, _, err = run(capsys, "reports", str(tmp_path / "nothing"))
    assert code == 2 and "no batch reports under" in err


def test_demo_lists_the_protocols_it_takes_and_refuses_the_others(capsys):
    # One list: `demo --help`, the refusal and the CLI page's command table name the same
    # protocols, every protocol that needs no schema registry (issue 23).

    from ticdc_sink.cli import DEMO_PROTOCOLS
    from ticdc_sink.codec import protocols

    specs = protocols.protocol_specs()
    assert DEMO_PROTOCOLS == tuple(s.name for s in specs if not s.needs_registry)
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    listed = ", ".join(DEMO_PROTOCOLS[:-1]) + " or " + DEMO_PROTOCOLS[-1]
    assert f"--protocol PROTOCOL {listed} (-o protocol=;" in help_text
    for spec in specs:
        if spec.name in DEMO_PROTOCOLS:
            continue
        assert spec.name not in help_text.split("--protocol PROTOCOL", 1)[1].split("(")[0]
        code, _, err = run(capsys, "demo", "--protocol", spec.name)
        assert code == 2
        assert f"demo --protocol {spec.name}: use {listed} (" in err
    page = (paths.DOCS / "reference/cli.md").read_text()
    choices = "\\|".join(DEMO_PROTOCOLS)  # `|` escaped in a Markdown table
    assert f"| `demo [--protocol {choices}] " in page
