"""The README's Options table, rendered from the option declarations (`config._field`
metadata: doc, default, TiCDC names) and the protocols' specs (which protocols read an
option). tests/unit/test_option_docs.py holds the README to it; run this module to print
the table to paste:

    python -m tests.support.option_docs
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from ticdc_sink import config
from ticdc_sink.codec import protocol_specs

__all__ = ["OPTION_PARTS", "declared_options", "options_table", "render_default"]

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


def options_table() -> str:
    """The Options table: the layers (`sink-uri`, `config`), then every option."""
    rows = [[f"`{name}`", "", doc] for name, doc in config.LAYER_OPTIONS.items()]
    for field in declared_options():
        option = field.metadata["option"]
        meaning = _meaning(option, field.metadata["doc"])
        rows.append([f"`{_name(option)}`", render_default(field), meaning])
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return _HEADER + "\n".join(line.replace("|  |", "| |") for line in lines) + "\n"


if __name__ == "__main__":
    print(options_table(), end="")
