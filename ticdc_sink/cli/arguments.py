"""What every command's arguments share: the number types of the flags, `-o NAME=VALUE`
and the flags that are sink options by another spelling (`--protocol`), and `a, b or c`
lists in help and error texts."""

from __future__ import annotations

import argparse

__all__ = [
    "given_options",
    "or_list",
    "partition_number",
    "positive_float",
    "positive_int",
]


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def partition_number(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a partition number (0, 1, ...)")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


# Flags that are sink options by another spelling: `--protocol avro` is `-o protocol=avro`.
_FLAG_OPTIONS = {
    "protocol": "protocol",
    "encoding_format": "encoding-format",
    "schema_registry": "schema-registry",
    "time_zone": "time-zone",
}


def or_list(names: list[str] | tuple[str, ...]) -> str:
    """`a, b or c`."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def given_options(args: argparse.Namespace) -> dict[str, str]:
    """The `-o NAME=VALUE` options and the flags that are options (`--protocol`), by
    option name (lowercase, as Spark passes them)."""
    options: dict[str, str] = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"-o {item!r}: give NAME=VALUE, e.g. -o protocol=debezium")
        options[name.strip().lower()] = value
    for attribute, option in _FLAG_OPTIONS.items():
        value = getattr(args, attribute, None)
        if value is None:
            continue
        flag = "--" + attribute.replace("_", "-")
        if option in options and options[option] != value:
            raise ValueError(
                f"{flag} {value} and -o {option}={options[option]} disagree; give it once"
            )
        options[option] = value
    return options
