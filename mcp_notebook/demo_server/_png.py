"""A small PNG made with zlib and struct alone (no imaging library)."""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, pixel) -> bytes:  # type: ignore[no-untyped-def]
    """An 8-bit RGB PNG; `pixel(x, y)` gives each (r, g, b)."""
    rows = b"".join(b"\x00" + bytes(channel for x in range(width) for channel in pixel(x, y)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 9)) + _chunk(b"IEND", b"")


def demo_image(size: int = 16) -> bytes:
    """A size x size gradient with a dark diagonal, easy to recognise when rendered."""

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        if x == y or x == size - 1 - y:
            return (32, 32, 48)
        return (x * 255 // (size - 1), y * 255 // (size - 1), 160)

    return png(size, size, pixel)
