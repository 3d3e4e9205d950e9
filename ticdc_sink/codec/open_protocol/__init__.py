"""TiCDC's open-protocol (`protocol=open-protocol`): row events batched into Kafka
messages, DDL events and the resolved event, as tiflow's `pkg/sink/codec/open` writes
them.

    open_protocol/
      values.py     type codes, column flags, each value's JSON text (shared)
      message.py    framing (version, lengths), key JSON, DDL and resolved events (shared)
      table.py      OpenProtocolTable: one table's entries and options, compiled once (shared)
      row.py        OpenProtocolRowEncoder: one change, one event
      batch.py      OpenProtocolBatchEncoder: the same events, column-wise
      encoder.py    OpenProtocolEncoder (size check, large messages, DDL) and the resolved event
      batching.py   OpenProtocolBatcher: one partition's events merged into messages
      decoder.py    OpenProtocolDecoder: messages (batches of events) back into events
      spec.py       SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import the shared ones and never each other; `encoder.py`
alone imports both paths. The package re-exports the public names below.
"""

from __future__ import annotations

from ticdc_sink.codec.open_protocol.batching import OpenProtocolBatcher
from ticdc_sink.codec.open_protocol.encoder import OpenProtocolEncoder, encode_watermark
from ticdc_sink.codec.open_protocol.message import BATCH_VERSION

__all__ = ["BATCH_VERSION", "OpenProtocolBatcher", "OpenProtocolEncoder", "encode_watermark"]
