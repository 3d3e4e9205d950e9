"""`ticdc-sink dry-run`: one example message of each kind the protocol sends for a table,
encoded as the writer encodes it; no Kafka, no registry."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any

from ticdc_sink import schema_change
from ticdc_sink.cli.decode import written_with
from ticdc_sink.cli.planning import (
    ASSUMED,
    decision_notes,
    ignored_ops,
    plan_given_table,
    resolve_options,
    sink_options,
    version_lines,
)
from ticdc_sink.codec import Message, protocols
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.column_selector import select_columns
from ticdc_sink.config import SinkConfig, mask_uri
from ticdc_sink.decode import DecodedRow
from ticdc_sink.errors import MessageTooLargeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import TableSchema
from ticdc_sink.writer import rules
from ticdc_sink.writer.plan import decide_table

__all__ = [
    "run_dry_run",
]


def _example_value(column: Any, variant: int) -> Any:
    """A plausible mounter value (ticdc_sink.events) of the column's type."""
    t = column.type
    match value_kind(column):
        case ValueKind.INT if t.base == "year":
            return 2024 + variant
        case ValueKind.INT | ValueKind.UINT:
            return 1 if t.base == "tinyint" and t.length == 1 else 1 + variant
        case ValueKind.FLOAT32 | ValueKind.FLOAT64:
            return 1.5 + variant
        case ValueKind.DECIMAL:
            return f"{12 + variant}.{'5' * t.scale}" if t.scale else str(12 + variant)
        case ValueKind.DATE:
            return f"2024-01-0{2 + variant}"
        case ValueKind.DATETIME | ValueKind.TIMESTAMP:
            fraction = "." + "1" * t.fsp if t.fsp else ""
            return f"2024-01-02 03:04:0{5 + variant}{fraction}"
        case ValueKind.TIME:
            return f"01:02:0{3 + variant}"
        case ValueKind.ENUM | ValueKind.SET:
            return 1 if t.elements else 0
        case ValueKind.BIT:
            return 1
        case ValueKind.JSON:
            return '{"a": ' + str(1 + variant) + "}"
        case ValueKind.VECTOR:
            return "[1,2]"
        case ValueKind.BINARY:
            return bytes([1, 2 + variant])
    return "example" if variant == 0 else "example-old"


def _examples(table: TableSchema, commit_ts: int) -> list[tuple[str, RowChange]]:
    key = set(table.handle_key)
    row = tuple(_example_value(c, 0) for c in table.columns)
    before = tuple(
        value if c.name in key else _example_value(c, 1)
        for c, value in zip(table.columns, row, strict=True)
    )
    return [
        ("INSERT", RowChange(table, Op.INSERT, commit_ts, row)),
        ("UPDATE", RowChange(table, Op.UPDATE, commit_ts, row, before)),
        ("DELETE", RowChange(table, Op.DELETE, commit_ts, None, row)),
    ]


class _ExampleRegistry:
    """Schema ids for dry runs: numbered in order, nothing leaves the process."""

    def __init__(self) -> None:
        self.schemas: dict[str, int] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        return self.schemas.setdefault(schema, len(self.schemas) + 1)

    def schema_text(self, schema_id: int) -> str:
        return next(s for s, i in self.schemas.items() if i == schema_id)


class _ExampleStore:
    """Claim-check files of a dry run: kept in memory, nothing is written."""

    def __init__(self, uri: str) -> None:
        self.base = mask_uri(uri).split("?", 1)[0].rstrip("/")
        self.files: dict[str, bytes] = {}

    def location(self, name: str) -> str:
        return f"{self.base}/{name}"

    def write(self, name: str, data: bytes) -> None:
        self.files[self.location(name)] = data

    def read(self, location: str) -> bytes:
        return self.files[location]


def run_dry_run(args: argparse.Namespace) -> int:
    config, assumed = resolve_options(sink_options(args), ASSUMED)
    found = plan_given_table(args, config)
    if found is None:
        raise ValueError("give the table: --table-ddl 'CREATE TABLE ...' or --columns '[...]'")
    config, plan = found
    table = plan.tables.template
    commit_ts = plan.commit_ts
    build_ts_ms = plan.build_ts_ms
    # What the writer does with this table's rows, decided by the writer's own code.
    decision = decide_table(config, table.database, table.table, table)
    assert decision.route is not None
    route = decision.route
    registry = _ExampleRegistry()
    options = config.codec
    store = None
    if options.claim_check_storage_uri is not None:
        store = _ExampleStore(options.claim_check_storage_uri)
    if not decision.taken:
        print(
            f"protocol {options.protocol.value}, table {table.database}.{table.table}: not "
            f"written, option 'filter-rules' does not take it (the writer drops every row of "
            "it and counts them as filtered)"
        )
        return 0
    # column-selectors: rows carry the selected columns, BOOTSTRAP and DDL the whole table.
    selection = decision.selection
    shown = table if selection is None else select_columns(table, selection)
    # Table routing: the messages name the table by its target (as the writer's tasks do).
    routed = functools.partial(rules.routed, config.routing)
    encoder, full_encoder = (
        protocols.build_encoder(
            options,
            routed(t),
            build_ts_ms=build_ts_ms,
            topic=route.topic,
            registry=registry,
            claim_check=store,
        )
        for t in (shown, table)
    )
    protocol = options.protocol.value
    print(
        f"protocol {protocol}, topic {route.topic}, table {table.database}.{table.table}, "
        f"partition rule {route.dispatcher.rule.value}"
    )
    for line in decision_notes(decision, table):
        print(line)
    for line in version_lines(options):
        print(line)
    if "schema-registry" in assumed:
        print("(no schema-registry given: schema ids are numbered here, nothing is registered)")
    if protocols.build_batcher(options) is not None:
        print(
            f"(each message below holds one event; the writer merges a partition's consecutive "
            f"events into one message, up to max-batch-size={options.max_batch_size} events "
            f"within max-message-bytes={options.max_message_bytes})"
        )
    makers: list[tuple[str, Callable[[], Message | None]]] = [
        (name, functools.partial(encoder.encode_row, change))
        for name, change in _examples(shown, commit_ts)
    ]
    makers.append(("BOOTSTRAP", full_encoder.encode_bootstrap))
    makers.append(
        (
            "DDL (CREATE TABLE)",
            functools.partial(
                protocols.encode_ddl,
                options,
                routed(table),
                None,
                schema_change.ddl_for(None, routed(table), qualified=routed(table) is not table)
                or "",
                commit_ts=commit_ts,
                build_ts_ms=build_ts_ms,
            ),
        )
    )
    makers.append(
        (
            "WATERMARK",
            functools.partial(
                protocols.encode_watermark, options, commit_ts, build_ts_ms=build_ts_ms
            ),
        )
    )
    decoder = protocols.decoder_for(
        protocol,
        written_with(
            options,
            schema_for_id=registry.schema_text,
            claim_check_loader=store.read if store is not None else None,
        ),
    )
    pretty = sys.stdout.isatty()
    dropped = ignored_ops(decision)
    for name, make in makers:
        print(f"\n== {name}")
        if name in dropped:
            print(f"   (not sent: {dropped[name]})")
            continue
        try:
            message = make()
        except MessageTooLargeError as exc:
            # What the writer would do with this message: fail the task.
            print(f"   the writer refuses it: {exc}")
            continue
        if message is None:
            print(f"   (protocol {protocol} sends none with these options)")
            continue
        if options.spec.batching:  # its events are framed to be merged (open-protocol)
            print(f"   key:   {_framed(message.key, key=True)}")
            print(f"   value: {_framed(message.value, key=False)}")
        else:
            print(f"   key:   {_shown(message.key, pretty)}")
            print(f"   value: {_shown(message.value, pretty)}")
        if message.diverted:
            print(
                f"   (above max-message-bytes: sent as {options.large_message_handle_option.value})"
            )
        if _binary(message.value) or _binary(message.key) or message.diverted:
            event = decoder.decode_message(message.key, message.value)
            print(f"   decoded: {event.describe()}")
            why = _why_not(name, event, config)
            if why:
                print(f"   ({why})")
    for location, data in store.files.items() if store is not None else ():
        print(f"\n== claim-check file {location}\n   {_shown(data, pretty)}")
    for schema, schema_id in registry.schemas.items():
        print(f"\n== Avro schema id {schema_id}\n{_indent_json(schema) if pretty else schema}")
    return 0


def _why_not(name: str, event: Any, config: SinkConfig) -> str | None:
    """Why an example decodes as another kind than it was written as, if it does."""
    if not isinstance(event, DecodedRow) or not name.startswith(("INSERT", "UPDATE", "DELETE")):
        return None
    if event.op.value == name:
        return None
    options = config.codec
    if options.spec.operation_needs_tidb_extension and not options.enable_tidb_extension:
        return (
            f"the {name} decodes as {event.op.value}: protocol {options.protocol.value} carries "
            "no operation without enable-tidb-extension=true (which adds the _tidb_op field)"
        )
    return f"the {name} decodes as {event.op.value}"


def _binary(data: bytes | None) -> bool:
    if not data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not data.lstrip().startswith((b"{", b"["))


def _framed(data: bytes | None, *, key: bool) -> str:
    """An open-protocol key or value of one event: its big-endian words in hex, then the
    event's JSON (`codec.open_protocol.message`), or its bytes when compressed."""
    data = data or b""
    head = 16 if key else 8
    words = " | ".join(data[i : i + 8].hex(" ", 4) for i in range(0, min(head, len(data)), 8))
    body = data[head:]
    text = _shown(body, False) if _binary(body) else body.decode("utf-8")
    return f"{words} | {text}".rstrip()


def _shown(data: bytes | None, pretty: bool) -> str:
    if data is None:
        return "null"
    if data == b"":
        return "(empty)"
    if _binary(data):
        return f"{len(data)} bytes: {data[:48].hex(' ')}{' ...' if len(data) > 48 else ''}"
    text = data.decode("utf-8")
    return _indent_json(text).replace("\n", "\n   ") if pretty else text


def _indent_json(text: str) -> str:
    """JSON text laid out one member per line, two spaces per level, every value exactly
    as written (no reparsing: numbers keep their digits, keys their order)."""
    out: list[str] = []
    depth = 0
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif char in "{[":
            closing = "}" if char == "{" else "]"
            if text[i + 1 : i + 2] == closing:  # {} and [] stay as they are
                out.append(char)
                continue
            depth += 1
            out.append(char + "\n" + "  " * depth)
        elif char in "}]":
            if text[i - 1 : i] in "{[" and i > 0:
                out.append(char)
                continue
            depth -= 1
            out.append("\n" + "  " * depth + char)
        elif char == ",":
            out.append(",\n" + "  " * depth)
        elif char == ":":
            out.append(": ")
        elif not char.isspace():
            out.append(char)
    return "".join(out)
