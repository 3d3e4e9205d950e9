"""`TiCDCVersion`: the TiCDC release whose messages the sink writes (`ticdc-version`).

Protocols (`codec.spec.ProtocolSpec.since`), options (`options.option_field`'s `since`)
and routing rules say from which release they exist; this module imports nothing, so all
of them may.
"""

from __future__ import annotations

import enum

__all__ = ["TiCDCVersion"]


class TiCDCVersion(enum.StrEnum):
    """The TiCDC release whose messages the sink writes (`ticdc-version`): pingcap/tiflow
    v8.5 or pingcap/ticdc v26.3, oldest first."""

    V8_5 = "8.5"
    V26_3 = "26.3"

    def at_least(self, other: TiCDCVersion) -> bool:
        """Whether this release is `other` or newer (the values do not sort as text)."""
        order = list(TiCDCVersion)
        return order.index(self) >= order.index(other)
