"""README's Options table is the option declarations rendered (tests/support/option_docs.py):
an option added, removed or changed without the README fails here, with the table to
paste."""

from __future__ import annotations

from pathlib import Path

import attrs

from tests.support.option_docs import declared_options, options_table
from ticdc_sink import config
from ticdc_sink.codec import protocol_specs

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_table(heading: str, header: str) -> str:
    text = README.read_text()
    section = text.split(f"\n{heading}\n", 1)[1]
    table = header + section.split(header, 1)[1].split("\n\n", 1)[0]
    return table + "\n"


def test_readme_options_table_is_the_declarations() -> None:
    table = _readme_table("## Options", "| option | default | meaning |")
    assert table == options_table(), (
        "README's Options table differs from the option declarations; paste the output "
        "of `python -m tests.support.option_docs`:\n" + options_table()
    )


def test_the_check_sees_a_changed_line() -> None:
    # The comparison is the whole table: one word changed in one doc is a difference.
    table = options_table()
    assert table.replace("brokers (or the hosts", "brokers (or hosts", 1) != table


def test_every_option_is_declared_once_with_a_doc() -> None:
    options = [field.metadata["option"] for field in declared_options()]
    assert len(options) == len(set(options)), "an option is declared twice"
    for field in declared_options():
        assert field.metadata["doc"].strip(), field.metadata["option"]
        assert "|" not in field.metadata["doc"], field.metadata["option"]


def test_every_option_a_protocol_owns_is_declared() -> None:
    options = {field.metadata["option"] for field in declared_options()}
    for spec in protocol_specs():
        assert set(spec.options) <= options, spec.name


def test_the_protocol_option_names_every_protocol() -> None:
    (field,) = [f for f in attrs.fields(config.CodecConfig) if f.name == "protocol"]
    for spec in protocol_specs():
        for name in spec.names():
            assert f"`{name}`" in field.metadata["doc"], name
