"""The documentation's generated parts: each page marks one with a line
`<!-- generated: NAME -->`, which the site's build (docs/hooks.py) replaces with
`GENERATED[NAME]()`. So the reference tables are the code's declarations rendered at every
build, never pasted: the write and read options and the TiCDC settings
(tests/support/option_docs.py), the consumers (tests/support/consumers.py), the protocols'
traits, every command's `--help`, and the benchmarks' summary from their JSON results. A
part may appear on several pages (the read options: their reference page and the reading
guide). tests/unit/project/test_doc_pages.py checks that every generator runs and covers what is
declared. Print one with

    python -m tests.support.doc_pages write-options
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Callable

from tests.support import paths
from tests.support.consumers import consumers_table
from tests.support.option_docs import (
    declared_options,
    options_table,
    read_options_table,
    ticdc_table,
)
from ticdc_sink import cli
from ticdc_sink.codec.protocols import protocol_specs

__all__ = [
    "BENCHMARKS",
    "CLI_COMMANDS",
    "GENERATED",
    "MARKER",
    "cli_help",
    "expand",
    "performance_tables",
    "protocol_traits",
    "runnable_blocks",
]

ROOT = paths.ROOT
BENCHMARKS = ROOT / "benchmarks"

#: A generated part in a page: the whole line.
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def protocol_traits() -> str:
    """Each protocol's traits, from its spec (`ticdc_sink.codec.spec.ProtocolSpec`)."""
    header = (
        "| `protocol` | also | registry | watermarks | DDL | bootstraps | several events "
        "per message | size check | large-message options | old values | row checksum | "
        "its own options |\n" + "| --- " * 12 + "|\n"
    )
    defaults = {f.metadata["option"]: f.default for f in declared_options()}
    rows = []
    for spec in protocol_specs():
        ddl = "no"
        if spec.ddl:
            ddl = "every partition" if spec.ddl_to_all_partitions else "partition 0"
        policies = ", ".join(f"`{p}`" for p in spec.large_message_policies) or "none"
        if spec.large_message_policies and spec.large_message_needs_tidb_extension:
            policies += " (with `enable-tidb-extension`)"
        old = _yes(spec.old_values)
        if spec.old_values and spec.old_values_option:
            on = defaults[spec.old_values_option] is True
            old = (
                f"unless `{spec.old_values_option}=false`"
                if on
                else (f"with `{spec.old_values_option}=true`")
            )
        cells = [
            f"`{spec.name}`",
            ", ".join(f"`{a}`" for a in spec.aliases),
            _yes(spec.needs_registry),
            spec.watermark.value,
            ddl,
            _yes(spec.bootstrap),
            _yes(spec.batching),
            _yes(spec.size_check),
            policies,
            old,
            _yes(spec.row_checksum),
            ", ".join(f"`{o}`" for o in (*spec.options, *spec.shared_options)),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return header + "\n".join(rows).replace("|  |", "| |") + "\n"


#: The subcommands of `ticdc-sink`, in the order the CLI page shows their help.
CLI_COMMANDS = ("demo", "decode", "dry-run", "check", "reports")


def _help(args: list[str]) -> str:
    out = io.StringIO()
    width = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli.main(args)
    finally:
        if width is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = width
    return out.getvalue().rstrip()


def cli_help() -> str:
    """`ticdc-sink --help`, then each command's `--help`, as the CLI prints them."""
    parts = [f"### `ticdc-sink --help`\n\n```text\n{_help(['--help'])}\n```\n"]
    for command in CLI_COMMANDS:
        text = _help([command, "--help"])
        parts.append(f"### `ticdc-sink {command} --help`\n\n```text\n{text}\n```\n")
    return "\n".join(parts)


def _load(name: str) -> dict:
    return json.loads((BENCHMARKS / name).read_text())


def _rate(value: float) -> str:
    return f"{value / 1000:.0f}k"


#: The recorded runs the performance page summarises: (file, what it measured).
SUMMARISED = {
    "write": "results-e2e-2026-11-22-column-wise.json",
    "memory": "results-memory-2026-11-22.json",
    "read": "results-read-2026-11-25-quiet-fetchwait.json",
}


def performance_tables() -> str:
    """The recorded write, memory and read runs, as tables from their JSON results."""
    write = _load(SUMMARISED["write"])
    env = write["environment"]
    lines = [
        f"Writes: {write['rows']:,} rows through Spark `local[{write['partitions']}]` into a "
        f"local broker, {env['cpus']} cores, PySpark {env['pyspark']}, {env['date']} "
        f"(`benchmarks/{SUMMARISED['write']}`).\n",
        "| writer | rows/s | of the ceiling (pre-built messages, no encoding) | "
        "bytes per message |",
        "| --- | --- | --- | --- |",
    ]
    for result in write["results"]:
        lines.append(
            f"| {result['writer']} | {_rate(result['rows_per_s'])} | "
            f"{result['vs_ceiling']:.2f}x | {result['bytes_per_message']:,.0f} |"
        )
    memory = _load(SUMMARISED["memory"])
    lines += [
        "",
        f"Memory: the peak resident size of the task's Python worker, {memory['protocol']}, "
        f"{memory['partitions']} partition (`benchmarks/{SUMMARISED['memory']}`).\n",
        "| rows | peak MiB | rows/s |",
        "| --- | --- | --- |",
    ]
    for result in memory["results"]:
        lines.append(
            f"| {result['rows']:,} | {result['peak_task_worker_rss_mib']:.0f} | "
            f"{_rate(result['rows_per_s'])} |"
        )
    read = _load(SUMMARISED["read"])
    lines += [
        "",
        f"Reads: {read['rows']:,} rows, median of the runs "
        f'(`benchmarks/{SUMMARISED["read"]}`): `ticdc-*` is `spark.read.format("ticdc")`, '
        "`kafka-*` Spark's Kafka source with `from_json` / `from_avro`, `baseline-*` one "
        "Python process reading with confluent-kafka, orjson and pyarrow.\n",
        "| reader | rows/s (median) | rows/s (best) |",
        "| --- | --- | --- |",
    ]
    for name, result in read["results"].items():
        lines.append(
            f"| {name} | {_rate(result['median_rows_per_s'])} | "
            f"{_rate(result['best_rows_per_s'])} |"
        )
    return "\n".join(lines) + "\n"


#: Every generated part, by the name pages give it.
GENERATED: dict[str, Callable[[], str]] = {
    "write-options": options_table,
    "ticdc-settings": ticdc_table,
    "read-options": read_options_table,
    "consumers": consumers_table,
    "protocol-traits": protocol_traits,
    "cli-help": cli_help,
    "performance": performance_tables,
}


def expand(markdown: str, page: str) -> str:
    """`markdown` with each generated part rendered; an unknown name is an error naming
    the page and the names there are."""

    def render(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATED:
            raise KeyError(f"{page}: no generated part {name!r}; there are {sorted(GENERATED)}")
        return GENERATED[name]().rstrip("\n")

    return MARKER.sub(render, markdown)


#: A code block CI runs (tests/integration/test_doc_blocks.py): this line, then a fence.
RUNNABLE = "<!-- runnable -->"
_BLOCK = re.compile(r"^<!-- runnable -->\n```python\n(.*?)^```$", re.M | re.S)


def runnable_blocks(markdown: str) -> list[str]:
    """The Python code of each block marked runnable, in page order; a marker not followed
    by a python fence is an error (the block would silently never run)."""
    blocks = [match.group(1) for match in _BLOCK.finditer(markdown)]
    if len(blocks) != markdown.count(RUNNABLE):
        raise ValueError(f"a `{RUNNABLE}` line is not followed by a ```python block")
    return blocks


if __name__ == "__main__":
    for wanted in sys.argv[1:] or sorted(GENERATED):
        print(GENERATED[wanted]())
