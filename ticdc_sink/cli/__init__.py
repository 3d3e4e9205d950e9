"""`ticdc-sink` / `python -m ticdc_sink`: see what the sink writes, without writing code.

    ticdc-sink demo [--protocol P] [-o option=value ...] [--bootstrap-servers H:P]
                                          local broker (or yours), a DataFrame of changes
                                          written through format("ticdc"), the decoded
                                          messages printed
    ticdc-sink decode --bootstrap-servers H:P --topic T [--protocol P] [--follow] ...
                                          decode every message of a topic
                                          (--follow-claim-check: read claim-check
                                          files back into full rows)
    ticdc-sink dry-run --table-ddl "CREATE TABLE ..." [--protocol P] [-o option=value ...]
                                          one example message of each kind, no Kafka
    ticdc-sink check [-o option=value ...] [--table db.t] [--key col=value ...]
                                          validate options; show topics and partitions
    ticdc-sink reports CHECKPOINT [--format table|jsonl]
                                          the batch reports kept under a checkpoint location
    ticdc-sink --version                  ticdc-sink <version>

Every command takes `--protocol P` and `-o NAME=VALUE` alike (`decode` the options that say
how to read messages). Errors exit with status 2 and one line on stderr; a reader that
goes away (`decode ... | head`) ends the command quietly.

This package holds `main` and the parser; each command is a module of its own: `demo`,
`decode`, `dry_run`, `check`, `reports`. `arguments` holds what every command's arguments
share (number flags, `-o NAME=VALUE`), `planning` what dry-run and check share (the options
resolved with stand-ins, the given table planned as the writer's driver plans it). Nothing
in `ticdc_sink` imports this package.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

import ticdc_sink
from ticdc_sink.cli.arguments import or_list, partition_number, positive_float, positive_int
from ticdc_sink.cli.check import run_check
from ticdc_sink.cli.decode import run_decode
from ticdc_sink.cli.demo import DEMO_PROTOCOLS, run_demo
from ticdc_sink.cli.dry_run import run_dry_run
from ticdc_sink.cli.reports import run_reports
from ticdc_sink.codec import protocols
from ticdc_sink.errors import TiCDCSinkError

__all__ = ["DEMO_PROTOCOLS", "main"]

# The exit status of a command whose reader went away (a closed pipe), as for any Unix
# tool killed by SIGPIPE (128 + 13).
_CLOSED_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        _silence_stdout()
        return _CLOSED_PIPE
    except (TiCDCSinkError, ValueError, OSError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"ticdc-sink {args.command}: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so that the interpreter's last
    flush at exit does not report the pipe again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ticdc-sink",
        description="Write, decode and check TiCDC-format change events on Kafka.",
    )
    parser.add_argument(
        "--version", action="version", version=f"ticdc-sink {ticdc_sink.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    sink_options = argparse.ArgumentParser(add_help=False)
    sink_options.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a sink option, as given to .option() (repeat)",
    )
    options = argparse.ArgumentParser(add_help=False, parents=[sink_options])
    options.add_argument(
        "--protocol",
        help=f"{or_list([s.name for s in protocols.protocol_specs()])} (-o protocol=)",
    )
    protocol_options = argparse.ArgumentParser(add_help=False)
    protocol_options.add_argument(
        "--encoding-format", help="simple: json or avro (-o encoding-format=)"
    )
    protocol_options.add_argument(
        "--schema-registry", help="avro: the registry URL (-o schema-registry=)"
    )
    protocol_options.add_argument(
        "--time-zone", help="the zone TIMESTAMP values are written in (-o time-zone=)"
    )

    demo = commands.add_parser(
        "demo",
        parents=[sink_options],
        help="write a small change stream to a local broker and print it decoded",
    )
    demo.add_argument(
        "--protocol",
        help=f"{or_list(DEMO_PROTOCOLS)} (-o protocol=; avro needs a schema registry, "
        "which the demo has none of)",
    )
    demo.add_argument("--topic", default="demo_{schema}_{table}", help="topic expression")
    demo.add_argument(
        "--bootstrap-servers",
        metavar="H:P",
        help="your Kafka brokers (host:port[,host:port]) instead of a local Tansu",
    )
    demo.set_defaults(run=run_demo)

    decode = commands.add_parser(
        "decode", parents=[options, protocol_options], help="decode every message of a topic"
    )
    decode.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    decode.add_argument("--topic", required=True)
    decode.add_argument("--format", choices=("table", "jsonl"), default="table")
    decode.add_argument(
        "--partition", type=partition_number, action="append", help="only these partitions"
    )
    decode.add_argument("--limit", type=positive_int, help="stop after this many messages")
    decode.add_argument(
        "--from-beginning",
        action="store_true",
        help="with --follow: read the topic from its start (without --follow it always is)",
    )
    decode.add_argument("--follow", action="store_true", help="keep reading new messages")
    decode.add_argument(
        "--idle",
        type=positive_float,
        default=1.5,
        help="without --follow: stop after this quiet time",
    )
    decode.add_argument(
        "--timeout", type=positive_float, default=10.0, help="seconds to reach the brokers"
    )
    decode.add_argument(
        "--follow-claim-check",
        action="store_true",
        help="simple, canal-json, open-protocol: read claim-check locations back into full rows",
    )
    decode.add_argument(
        "--claim-check-raw-value",
        action="store_true",
        help="the sink wrote claim-check files with claim-check-raw-value=true",
    )
    decode.set_defaults(run=run_decode)

    for name, help_text in (
        ("dry-run", "print one example message of each kind; no Kafka, no registry"),
        ("check", "validate options and show topics and partitions"),
    ):
        sub = commands.add_parser(name, parents=[options, protocol_options], help=help_text)
        sub.add_argument("--sink-uri", help="TiCDC sink URI (kafka://host:port/topic?...)")
        sub.add_argument("--config", help="TiCDC changefeed TOML file ([sink] is read)")
        sub.add_argument("--table-ddl", help="CREATE TABLE statement (or @file)")
        sub.add_argument(
            "--columns",
            help='JSON list of columns, e.g. [{"name":"id","type":"bigint","key":true}] (or @file)',
        )
        if name == "check":
            sub.add_argument("--table", action="append", default=[], help="db.table (repeat)")
            sub.add_argument(
                "--key", action="append", default=[], metavar="COLUMN=VALUE", help="row values"
            )
            sub.add_argument(
                "--partitions",
                type=positive_int,
                help="partition count to assume (default partition-num)",
            )
            sub.set_defaults(run=run_check)
        else:
            sub.set_defaults(run=run_dry_run)

    reports = commands.add_parser(
        "reports", help="print the batch reports kept under a checkpoint location"
    )
    reports.add_argument("checkpoint", metavar="CHECKPOINT", help="the checkpointLocation")
    reports.add_argument("--format", choices=("table", "jsonl"), default="table")
    reports.add_argument("--limit", type=positive_int, help="only the last N reports")
    reports.set_defaults(run=run_reports)
    return parser
