"""What a person attaches to a message, and what a tool's result carries besides text.

An `Image` is bytes whose type is sniffed from the bytes themselves (PNG, JPEG,
GIF, WebP — the four every image-taking model service accepts), with its size
read from the headers, so no image library is needed to take one. An
`Attachment` is any other piece of the person's context for one message: a
file's text, a folder's listing, a command's output, a resource. A `Prompt` is
a message as a front end hands it to the Session: text with both.

The bytes of an image live in memory and, once a conversation is saved, in a
file beside it (engine/store.py); its JSON names that file, never the bytes.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from agent_cli.errors import ImageError

__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "SNIFF_BYTES",
    "Attachment",
    "AttachmentKind",
    "Image",
    "Prompt",
    "chips",
    "image_from_bytes",
    "image_from_data_uri",
    "is_image_name",
    "load_image",
    "sniff",
]

# The smallest of the services' limits (Anthropic's): an image within them goes anywhere.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
# Read this much of a file before deciding it is an image (the headers are at the start).
SNIFF_BYTES = 32

AttachmentKind = Literal["file", "folder", "command", "resource"]


@dataclass(frozen=True)
class Image:
    """An image's bytes with what is known of them; `data` is b"" when its stored file
    is gone (the model is told so instead)."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int
    name: str = ""  # the file name it came from, or "" (pasted, from a tool)

    @cached_property
    def file(self) -> str:
        """The name of its file beside the conversation: the same bytes, the same file."""
        import hashlib  # here: OpenSSL's ~3 ms at start, before the TUI's first frame

        return hashlib.sha256(self.data).hexdigest()[:32] + "." + IMAGE_TYPES[self.media_type]

    @property
    def label(self) -> str:
        """The chip a transcript shows: `[image shot.png 640×480]`."""
        name = f"{self.name} " if self.name else ""
        return f"[image {name}{self.width}×{self.height}]"

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"

    def ref_json(self, file: str = "") -> dict[str, Any]:
        """Its JSON in a stored conversation: the file it is kept in, never the bytes."""
        return {
            "file": file or self.file,
            "media_type": self.media_type,
            "width": self.width,
            "height": self.height,
            "name": self.name,
        }

    @classmethod
    def from_ref(cls, ref: dict[str, Any], data: bytes) -> Image:
        """The image `ref_json` described, with the bytes read from its file (b"": gone)."""
        image = cls(
            data,
            str(ref.get("media_type", "image/png")),
            int(ref.get("width", 0)),
            int(ref.get("height", 0)),
            str(ref.get("name", "")),
        )
        if not data:  # its name stays the stored one, so a later save keeps pointing there
            image.__dict__["file"] = str(ref.get("file", ""))
        return image


@dataclass(frozen=True)
class Attachment:
    """A piece of the person's context for one message. The model reads `text`; a
    transcript shows only `label` (a chip), never the content."""

    kind: AttachmentKind
    label: str  # what it is: a path, `!command`, `server:uri`
    text: str

    @property
    def chip(self) -> str:
        """What a transcript shows of it: `[file src/util.py]`."""
        return f"[{self.kind} {self.label}]"

    def for_model(self) -> str:
        # The label is escaped: a file named `a" note="…` or `!echo "x"` cannot break the tag.
        import html  # here: its entities' table (~1.5 ms) is not needed before the first frame

        label = html.escape(self.label, quote=True)
        return f'<attached {self.kind}="{label}">\n{self.text}\n</attached>'

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attachment:
        return cls(data.get("kind", "file"), str(data.get("label", "")), str(data.get("text", "")))


@dataclass(frozen=True)
class Prompt:
    """A message as a front end hands it to the Session."""

    text: str
    images: tuple[Image, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    # The part of `text` whose `@…` mentions are read (None: all of it). A prompt command's
    # body is a repository's file or an MCP server's text, not the person's: only the
    # arguments they typed may name what to attach (a file, another server's resource).
    mentions: str | None = None


def chips(images: tuple[Image, ...], attachments: tuple[Attachment, ...]) -> list[str]:
    """What a transcript shows of a message's images and attachments, in place of them."""
    return [image.label for image in images] + [a.chip for a in attachments]


# ----------------------------------------------------------------- reading images


def sniff(data: bytes) -> str | None:
    """The media type the bytes begin with; None for anything but the four taken."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_image_name(name: str) -> bool:
    """Whether a file's name says image (the bytes still decide)."""
    return name.lower().endswith(IMAGE_SUFFIXES)


def image_from_bytes(data: bytes, name: str = "") -> Image:
    """An Image of these bytes, within the limits (resized when Pillow is installed);
    ImageError when they are not an image taken, or too big."""
    media_type = sniff(data)
    shown = name or "the image"
    if media_type is None:
        raise ImageError(
            f"{shown} is not a PNG, JPEG, GIF or WebP image — convert it to one of those."
        )
    try:
        width, height = _dimensions(data, media_type)
    except (struct.error, ValueError, IndexError) as exc:
        damaged = f"{shown} is a damaged {media_type} file ({exc})"
        raise ImageError(f"{damaged} — save it again.") from None
    image = Image(data, media_type, width, height, name)
    if len(data) > MAX_IMAGE_BYTES or max(width, height) > MAX_IMAGE_SIDE:
        image = _shrunk(image)
    return image


def load_image(path: Path, name: str = "") -> Image:
    """The image in a file; ImageError when it cannot be read or is not one."""
    shown = name or path.name
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES * 8 + 1)  # a bigger one is refused below
    except OSError as exc:
        raise ImageError(f"{shown} could not be read ({exc.strerror}) — check the path.") from None
    return image_from_bytes(data, shown)


def image_from_data_uri(text: str, name: str = "") -> Image | None:
    """The image in `data:image/…;base64,…` text; None when the text is not one."""
    head, comma, body = text.strip().partition(",")
    if not comma or not head.startswith("data:image/") or not head.endswith(";base64"):
        return None
    try:
        data = base64.b64decode("".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return image_from_bytes(data, name or "pasted")


def _dimensions(data: bytes, media_type: str) -> tuple[int, int]:
    """Width and height from the headers alone."""
    if media_type == "image/png":
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if media_type == "image/gif":
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    if media_type == "image/webp":
        return _webp_dimensions(data)
    return _jpeg_dimensions(data)


def _webp_dimensions(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    raise ValueError(f"unknown WebP chunk {chunk!r}")


# Start-of-frame markers carry the size; these three in their range do not.
_NOT_FRAMES = (0xC4, 0xC8, 0xCC)


def _jpeg_dimensions(data: bytes) -> tuple[int, int]:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            raise ValueError("no marker where one belongs")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in _NOT_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    raise ValueError("no frame header")


def _shrunk(image: Image) -> Image:
    """The image made to fit the limits with Pillow; refused, with the limits, without it."""
    limits = f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB and {MAX_IMAGE_SIDE} pixels a side"
    shown = image.name or "the image"
    try:
        from PIL import Image as PillowImage  # type: ignore[import-not-found]  # optional
    except ImportError:
        raise ImageError(
            f"{shown} ({len(image.data)} bytes, {image.width}×{image.height}) is over the "
            f"limit of {limits} — make it smaller, or install Pillow to have it resized."
        ) from None
    with PillowImage.open(io.BytesIO(image.data)) as picture:
        picture.load()
        side = MAX_IMAGE_SIDE
        for _ in range(8):
            copy = picture.copy()
            copy.thumbnail((side, side))
            out = io.BytesIO()
            fmt = "JPEG" if image.media_type == "image/jpeg" else "PNG"
            (copy.convert("RGB") if fmt == "JPEG" else copy).save(out, fmt)
            if out.tell() <= MAX_IMAGE_BYTES:
                return image_from_bytes(out.getvalue(), image.name)
            side = side * 2 // 3
    raise ImageError(f"{shown} could not be made to fit the limit of {limits} — make it smaller.")
