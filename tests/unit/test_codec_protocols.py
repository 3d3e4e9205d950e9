"""The list of protocols (`codec.protocols.PROTOCOLS`) and what is built from it: the
`protocol` values (`codec.choices.Protocol`) are the specs' names, in the same order."""

from __future__ import annotations

from ticdc_sink.codec.choices import Protocol
from ticdc_sink.codec.protocols import protocol_specs


def test_the_protocol_values_are_the_specs_names_in_order() -> None:
    assert [p.value for p in Protocol] == [spec.name for spec in protocol_specs()]
