"""`ticdc-sink decode`: read a topic and print every message decoded (a table or JSON
lines), following claim-check locations back into full rows on request. `print_topic` is
the demo's too."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Generator
from typing import Any

import attrs

from ticdc_sink.claim_check import read_claim_check
from ticdc_sink.cli.arguments import given_options
from ticdc_sink.codec import protocols
from ticdc_sink.config import CodecConfig, SinkConfig
from ticdc_sink.decode import ClaimCheckLoader, Decoder, DecoderSettings, decode_record
from ticdc_sink.decode.sniff import misread_hint
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.registry import ConfluentSchemaRegistry

__all__ = [
    "print_topic",
    "run_decode",
]


# The options that say how to read a topic; the rest are the writer's.
_DECODE_OPTIONS = (
    "protocol",
    "encoding-format",
    "time-zone",
    "claim-check-raw-value",
    "large-message-handle-compression",
)


def run_decode(args: argparse.Namespace) -> int:
    options = given_options(args)
    if args.claim_check_raw_value:
        options["claim-check-raw-value"] = "true"
    with contextlib.ExitStack() as cleanup:
        decoder = _decoder(options, args.follow_claim_check, cleanup)
        protocol = options.get("protocol", "simple")
        live = args.follow and sys.stderr.isatty()
        count = 0
        records = cleanup.enter_context(contextlib.closing(_records(args)))
        for record in records:
            if count == 0 and args.format == "table":
                print(f"{'partition':>9} {'offset':>8}  event")
            count += 1
            print(_render(record, decoder, args.format, protocol), flush=args.follow)
            if live:
                print(f"\r{count} messages", end="", file=sys.stderr, flush=True)
            if args.limit and count >= args.limit:
                break
    if args.format == "table" and not args.follow:
        print(f"{count} messages from topic {args.topic}")
    return 0


def _decoder(
    options: dict[str, str], follow_claim_check: bool, cleanup: contextlib.ExitStack
) -> Decoder:
    """The decoder the options ask for; a registry client (avro) is closed by `cleanup`."""
    registry_options = {k: v for k, v in options.items() if k.startswith("schema-registry")}
    other = sorted(set(options) - set(_DECODE_OPTIONS) - set(registry_options))
    if other:
        raise ValueError(
            f"-o {other[0]}: decode takes only the options that say how to read messages: "
            f"{', '.join(_DECODE_OPTIONS)}, schema-registry and schema-registry-*"
        )
    protocol = options.get("protocol", "simple").strip().lower()
    spec = protocols.find_protocol(protocol)  # an unknown one: decoder_for says so
    lookup = None
    if spec is not None and spec.needs_registry:
        if "schema-registry" not in registry_options:
            raise ValueError(
                f"decode --protocol {spec.name} needs --schema-registry URL, the registry the "
                "messages were written with"
            )
        lookup = _schema_lookup(spec.name, registry_options, cleanup)
    elif registry_options:
        takers = " or ".join(s.name for s in protocols.protocol_specs() if s.needs_registry)
        raise ValueError(f"--{sorted(registry_options)[0]} applies to --protocol {takers} only")
    raw_value = options.get("claim-check-raw-value", "false").strip().lower()
    if raw_value not in ("true", "false"):
        raise ValueError(f"-o claim-check-raw-value={raw_value}: use true or false")
    settings = DecoderSettings(
        encoding_format=options.get("encoding-format", "json").strip().lower(),
        time_zone=options.get("time-zone", "UTC"),
        schema_for_id=lookup,
        claim_check_loader=read_claim_check if follow_claim_check else None,
        claim_check_raw_value=raw_value == "true",
        compression=options.get("large-message-handle-compression", "none"),
    )
    return protocols.decoder_for(protocol, settings)


def written_with(
    options: CodecConfig,
    *,
    schema_for_id: Callable[[int], str] | None = None,
    claim_check_loader: ClaimCheckLoader | None = None,
) -> DecoderSettings:
    """The settings that read what a writer with `options` writes."""
    return DecoderSettings(
        encoding_format=options.encoding_format.value,
        time_zone=options.time_zone,
        schema_for_id=schema_for_id,
        claim_check_loader=claim_check_loader,
        claim_check_raw_value=options.claim_check_raw_value,
        compression=options.large_message_handle_compression.value,
    )


def _schema_lookup(
    protocol: str, registry_options: dict[str, str], cleanup: contextlib.ExitStack
) -> Callable[[int], str]:
    """Writer schemas by id from the registry. An id the registry does not know fails
    only its message (reported on its line); a registry that cannot be reached fails the
    command."""
    # The sink's own option parsing: credentials in the URL, schema-registry-user, TLS.
    config = SinkConfig.from_options(
        {"kafka.bootstrap.servers": "decode", "topic": "decode", "protocol": protocol}
        | registry_options
    )
    registry = ConfluentSchemaRegistry(config.registry, config.codec.subject_name_strategy)
    cleanup.callback(registry.close)
    return registry.decoder_schema_text


def _records(args: argparse.Namespace) -> Generator[Record, None, None]:
    # The reader's consumer (ticdc_sink.read.consumer), as format("ticdc") reads.
    config = ReadConfig(
        args.bootstrap_servers,
        args.topic,
        poll_timeout_s=args.timeout,
        broker_timeout_s=args.timeout,
    )
    with TopicLog(config, following=args.follow) as log:
        if args.follow:
            yield from log.follow(args.partition, from_beginning=args.from_beginning)
            return
        yield from log.read_until_idle(
            args.partition, idle_s=args.idle, timeout_s=max(args.timeout, args.idle + 1)
        )


def _render(record: Record, decoder: Decoder, fmt: str, protocol: str) -> str:
    """One message, decoded (a line per event: an open-protocol message may hold
    several); a message that is not of `protocol` is reported, not fatal."""
    try:
        events = decode_record(decoder, record.key, record.value)
    except (DecodeError, ValueError) as exc:
        problem = str(exc).splitlines()[0] + misread_hint(decoder, record.key, record.value)
        if fmt == "jsonl":
            return json.dumps(
                {"partition": record.partition, "offset": record.offset, "error": problem}
            )
        return f"{record.partition:>9} {record.offset:>8}  not {protocol}: {problem}"
    lines = []
    for event in events:
        if fmt == "jsonl":
            data: dict[str, Any] = {"partition": record.partition, "offset": record.offset}
            data["event"] = type(event).__name__.removeprefix("Decoded").upper()
            data.update(attrs.asdict(event, recurse=True, value_serializer=_plain))
            lines.append(json.dumps(data, default=str, ensure_ascii=False))
        else:
            lines.append(f"{record.partition:>9} {record.offset:>8}  {event.describe()}")
    return "\n".join(lines)


def _plain(_instance: Any, _field: Any, value: Any) -> Any:
    if isinstance(value, Op):
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    return value


def print_topic(bootstrap: str, topic: str, decoder: Decoder) -> None:
    """Print every message of a topic, partition by partition, decoded."""
    with TopicLog(ReadConfig(bootstrap, topic, poll_timeout_s=30.0)) as log:
        records = log.read_until_idle(None, idle_s=1.0, timeout_s=30.0)
    print(f"topic {topic}: {len(records)} messages")
    for partition in sorted({r.partition for r in records}):
        print(f"  partition {partition}")
        for record in (r for r in records if r.partition == partition):
            for event in decode_record(decoder, record.key, record.value):
                print(f"    offset {record.offset:>3}  {event.describe()}")
