"""A CRC-32 written out bit by bit, the independent reference the row checksum tests
compare `zlib.crc32` (codec/checksum.py) against."""

from __future__ import annotations

__all__ = ["crc32_bitwise"]


def crc32_bitwise(data: bytes) -> int:
    """CRC-32/IEEE (reflected polynomial 0xEDB88320), as Go's crc32.IEEETable computes."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
