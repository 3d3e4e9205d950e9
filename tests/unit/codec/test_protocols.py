"""The list of protocols (`codec.protocols.PROTOCOLS`) and what is built from it: the
`protocol` values (`codec.choices.Protocol`) are the specs' names, in the same order; a
spec that says it sends DDL, watermarks or batches names the entry point that does."""

from __future__ import annotations

import attrs
import pytest

from ticdc_sink.codec.choices import Protocol
from ticdc_sink.codec.protocols import protocol_specs


def test_the_protocol_values_are_the_specs_names_in_order() -> None:
    assert [p.value for p in Protocol] == [spec.name for spec in protocol_specs()]


def test_each_trait_that_sends_something_has_its_entry_point() -> None:
    spec = protocol_specs()[0]
    for trait in ({"ddl": True}, {"batching": True}):
        with pytest.raises(TypeError, match="a trait without its entry point"):
            attrs.evolve(spec, encode_table_ddl=None, build_batcher=None, **trait)
    with pytest.raises(TypeError, match="a trait without its entry point"):
        attrs.evolve(spec, encode_watermark=None)  # simple: watermark ALWAYS
