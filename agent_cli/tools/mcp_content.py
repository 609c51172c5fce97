"""What an MCP server answers with, as a `ToolResult`: text for the model, images as images.

A tool's result (and a resource read) is a list of content blocks. Text is the
result. An image (PNG, JPEG, GIF, WebP within the size limits) is carried on
the result's `images`, so a vision-capable model sees it (providers put it
beside the tool's answer) and the person's card shows it; the text says it is
there. What a model cannot take — audio, other binary data, an image that is
not one of the four — is described in a line: its type and size. An embedded
text resource is its text under its URI; a resource link, its name and URI.
Structured content is kept: shown as JSON when no text part already says it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from agent_cli.errors import ImageError
from agent_cli.media import Image, image_from_bytes
from agent_cli.tools.base import ToolResult

__all__ = ["resource_result", "to_result"]


def to_result(result: Any) -> ToolResult:
    """A `CallToolResult` as our result."""
    images: list[Image] = []
    parts = [_describe(block, images) for block in result.content]
    structured = result.structured_content
    if structured is not None and not any(_says(part, structured) for part in parts):
        shown = json.dumps(structured, ensure_ascii=False, indent=1)
        parts.append(f"[structured content]\n{shown}" if parts else shown)
    text = "\n".join(parts) if parts else "(the tool returned nothing)"
    return ToolResult(text, is_error=bool(result.is_error), images=tuple(images))


def resource_result(uri: str, contents: list[Any]) -> ToolResult:
    """A `ReadResourceResult`'s contents as our result."""
    images: list[Image] = []
    parts = [_contents(item, images) for item in contents]
    return ToolResult("\n".join(parts) if parts else f"(the resource {uri} is empty)",
                      images=tuple(images))  # fmt: skip


def _says(part: str, structured: Any) -> bool:
    """Whether a text part already is the structured content (as JSON, or as the SDKs wrap a
    plain return value: `{"result": value}`)."""
    if isinstance(structured, dict) and list(structured) == ["result"]:
        structured = structured["result"]
        if part == structured:
            return True
    try:
        return bool(json.loads(part) == structured)
    except ValueError:
        return False


def _describe(block: Any, images: list[Image]) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "image":
        image = _image(block.data, block.mime_type)
        if image is not None:
            images.append(image)
            return f"[image: {block.mime_type} {image.width}×{image.height}, shown beside this]"
        return f"[image: {block.mime_type}, {_size(block.data)}]"
    if kind == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}]"
    if kind == "resource":
        return _contents(block.resource, images)
    if kind == "resource_link":
        mime = f" ({block.mime_type})" if block.mime_type else ""
        about = f": {block.description}" if block.description else ""
        return f"[resource link {block.name} <{block.uri}>{mime}{about}]"
    return f"[{kind or 'unknown'} content]"


def _contents(resource: Any, images: list[Image]) -> str:
    """A resource's contents (text or a base64 blob) under its URI."""
    mime = f" ({resource.mime_type})" if resource.mime_type else ""
    if hasattr(resource, "text"):
        return f"[resource {resource.uri}{mime}]\n{resource.text}"
    image = _image(resource.blob, resource.mime_type or "")
    if image is not None:
        images.append(image)
        return f"[resource {resource.uri}{mime}: an image {image.width}×{image.height}, shown]"
    return f"[resource {resource.uri}{mime}: {_size(resource.blob)} of binary data]"


def _image(data: str, mime_type: str) -> Image | None:
    """The image a base64 block holds; None when it is not one a model takes."""
    if not mime_type.startswith("image/"):
        return None
    try:
        return image_from_bytes(base64.b64decode(data, validate=True))
    except (ImageError, binascii.Error, ValueError):
        return None


def _size(data: str) -> str:
    count = len(data) * 3 // 4
    return f"{count} bytes" if count < 1024 else f"{count / 1024:.1f} KiB"
