"""Real image files for tests, made without an image library.

`png(width, height)` encodes a real PNG (any decoder reads it); the JPEG, GIF
and WebP beside this module are small real files (16×16, from CPython's tests).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent / "images"
JPEG = HERE / "python.jpg"
GIF = HERE / "python.gif"
WEBP = HERE / "python.webp"


def png(width: int, height: int, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A real RGB PNG of one colour."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    row = b"\x00" + bytes(colour) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )
