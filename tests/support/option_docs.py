"""The option tables of the docs, rendered from the option declarations at every build of
the docs (tests/support/doc_pages.py): the write options (`options.option_field` metadata: doc,
default, TiCDC names, with the protocols' specs saying which protocols read an option), the
read options (`ticdc_sink.read.options.READ_OPTIONS`), both in one table form (`table`),
and the TiCDC settings (the options' TiCDC names and `ticdc_settings.SETTINGS`, every other
TiCDC setting); run this module to print the three tables:

    python -m tests.support.option_docs
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ticdc_sink import config
from ticdc_sink.codec.protocols import protocol_specs
from ticdc_sink.read.options import READ_OPTIONS
from ticdc_sink.ticdc_settings import SETTINGS, Fate, TiCDCSetting

__all__ = [
    "OPTION_PARTS",
    "OTHER_CHANGEFEED_SETTINGS",
    "declared_options",
    "options_table",
    "read_options_table",
    "render_default",
    "table",
    "ticdc_table",
]

#: The config parts, in the order the table lists their options.
OPTION_PARTS = (
    config.KafkaConfig,
    config.RoutingConfig,
    config.CodecConfig,
    config.RegistryConfig,
    config.InputConfig,
    config.SinkConfig,
)

_HEADER = "| option | default | meaning |\n| --- | --- | --- |\n"


def declared_options() -> list[attrs.Attribute[Any]]:
    """Every option's field, in table order (a field without an option is not one)."""
    return [
        field
        for part in OPTION_PARTS
        for field in attrs.fields(part)
        if field.metadata.get("option")
    ]


def render_default(field: attrs.Attribute[Any]) -> str:
    """A field's default as the table shows it: empty for none, true/false, `names`."""
    shown = field.metadata.get("shown_default")
    if shown is not None:
        return shown
    value = field.default
    if value is attrs.NOTHING or value is None or value == () or value == {}:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return f"`{value.value}`"
    if isinstance(value, str):
        return f"`{value}`"
    return str(value)


def _name(option: str) -> str:
    if option == "kafka.*":
        return "kafka.<name>"
    return config.spell_option(option)


def _meaning(option: str, doc: str) -> str:
    readers = [spec.name for spec in protocol_specs() if spec.reads(option)]
    if not readers or len(readers) == len(protocol_specs()):
        return doc
    return f"{', '.join(readers)}: {doc}"


def table(rows: Iterable[Sequence[str]]) -> str:
    """An options table: a row of (the option's names, its default, what it means) each."""
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return _HEADER + "\n".join(line.replace("|  |", "| |") for line in lines) + "\n"


def options_table() -> str:
    """The write options: the layers (`sink-uri`, `config`), then every option."""
    rows = [[f"`{name}`", "", doc] for name, doc in config.LAYER_OPTIONS.items()]
    for field in declared_options():
        option = field.metadata["option"]
        meaning = _meaning(option, field.metadata["doc"])
        rows.append([f"`{_name(option)}`", render_default(field), meaning])
    return table(rows)


def read_options_table() -> str:
    """The read options (`READ_OPTIONS`), each named as users spell it, aliases beside."""
    return table(
        [
            ", ".join(f"`{name}`" for name in (option.name, *option.aliases)),
            option.default,
            option.doc,
        ]
        for option in READ_OPTIONS
    )


_TICDC_HEADER = "| TiCDC setting | here |\n| --- | --- |\n"

#: The last row: the changefeed settings outside [sink] that no declaration names.
OTHER_CHANGEFEED_SETTINGS = (
    "| other changefeed keys and sections (`[mounter]`, `[scheduler]`, `[consistent]`, "
    "`memory-quota`, `bdr-mode`, ...) | meaningless here: they govern how "
    "TiCDC reads TiDB's changes; accepted and reported as ignored |"
)


def _ticdc_default(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "empty"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    return f"`{value}`"


def _fate(declared: TiCDCSetting) -> str:
    unless = f"; accepted at TiCDC's default ({_ticdc_default(declared.default)})"
    match declared.fate:
        case Fate.LIBRDKAFKA:
            return f"honoured: {declared.note}"
        case Fate.IGNORED:
            return f"meaningless here: {declared.note}; accepted and reported as ignored"
        case Fate.REFUSED:
            return f"refused: {declared.note}{unless}"
    return f"not yet built ({declared.note}); refused{unless}"


def _ticdc_order(row: tuple[str, str]) -> tuple[bool, bool, str]:
    name = row[0]
    return (name.startswith("["), name.startswith("dispatchers."), name)


def ticdc_table() -> str:
    """Every TiCDC Kafka-sink setting and what the sink does with it: the options that
    honour one (their `ticdc` names), then `ticdc_settings.SETTINGS`, by name."""
    rows = [
        (name, f"honoured: option `{_name(field.metadata['option'])}`")
        for field in declared_options()
        for name in field.metadata["ticdc"]
    ]
    rows += [(declared.name, _fate(declared)) for declared in SETTINGS]
    lines = [f"| `{name}` | {here} |" for name, here in sorted(rows, key=_ticdc_order)]
    return _TICDC_HEADER + "\n".join([*lines, OTHER_CHANGEFEED_SETTINGS]) + "\n"


if __name__ == "__main__":
    print(options_table())
    print(read_options_table())
    print(ticdc_table(), end="")
