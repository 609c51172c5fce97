"""Images a person pastes: from the clipboard (Ctrl+V), or as a path or `data:` text.

The clipboard is read with the system's own tool — `wl-paste` (Wayland), `xclip`
(X11), `pbpaste` (macOS) — the first one installed; with none, or no image in
it, a `ClipboardError` says so and what to do. A pasted path is the person's own
choice of file (their screenshots folder, say), so unlike `@path` it is not
confined to the workspace.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

from agent_cli.errors import ClipboardError
from agent_cli.media import Image, image_from_bytes, image_from_data_uri, is_image_name, load_image

__all__ = ["clipboard_image", "image_from_paste", "looks_like_image"]

# How each tool lists what the clipboard holds, and how it gives one type of it.
LIST_TYPES = {
    "wl-paste": ["wl-paste", "--list-types"],
    "xclip": ["xclip", "-selection", "clipboard", "-target", "TARGETS", "-out"],
}
READ_TYPE = {
    "wl-paste": ["wl-paste", "--no-newline", "--type"],
    "xclip": ["xclip", "-selection", "clipboard", "-out", "-target"],
}
TOOLS = ("wl-paste", "xclip", "pbpaste")
WANTED = ("image/png", "image/jpeg", "image/webp", "image/gif")
TIMEOUT_SECONDS = 5.0
NO_TOOL = (
    "No clipboard tool was found to read an image with — install wl-clipboard (Wayland) "
    "or xclip (X11), or paste the image file's path instead."
)


def looks_like_image(text: str) -> bool:
    """Whether pasted text is an image: `data:image/…` text or one image file's path."""
    text = text.strip()
    if text.startswith("data:image/"):
        return True
    return "\n" not in text and is_image_name(_unquoted(text)) and _path(text).is_file()


def image_from_paste(text: str) -> Image | None:
    """The image pasted text stands for (None: it is not one); ImageError if it is
    a file that cannot be taken."""
    text = text.strip()
    if text.startswith("data:image/"):
        return image_from_data_uri(text)
    if not looks_like_image(text):
        return None
    path = _path(text)
    return load_image(path, path.name)


def _unquoted(text: str) -> str:
    """A path as terminals paste a dropped file: quoted, `file://…`, spaces escaped."""
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if text.startswith("file://"):
        text = unquote(urlsplit(text).path)
    return text.replace("\\ ", " ")


def _path(text: str) -> Path:
    return Path(os.path.expanduser(_unquoted(text)))


async def clipboard_image() -> Image:
    """The image on the clipboard; ClipboardError when there is no tool or no image."""
    for tool in TOOLS:
        if shutil.which(tool) is None:
            continue
        if tool == "pbpaste":  # text only: an image there is a path or data: text
            found = image_from_paste((await _output(["pbpaste"])).decode("utf-8", "replace"))
            if found is None:
                raise ClipboardError("The clipboard holds no image — copy one first.")
            return found
        types = (await _output(LIST_TYPES[tool])).decode("utf-8", "replace").split()
        wanted = next((kind for kind in WANTED if kind in types), None)
        if wanted is None:
            text = next((kind for kind in types if kind.startswith("text/")), None)
            if text is not None:  # a copied file's path, or data: text
                pasted = image_from_paste((await _output([*READ_TYPE[tool], text])).decode())
                if pasted is not None:
                    return pasted
            raise ClipboardError("The clipboard holds no image — copy one first.")
        return image_from_bytes(await _output([*READ_TYPE[tool], wanted]), "clipboard")
    raise ClipboardError(NO_TOOL)


async def _output(command: list[str]) -> bytes:
    """What a clipboard tool prints; ClipboardError when it fails or hangs."""
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise ClipboardError(f"{command[0]} could not be started ({exc.strerror}).") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise ClipboardError(
            f"{command[0]} did not answer within {TIMEOUT_SECONDS:g} s — is a display running?"
        ) from None
    if process.returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        detail = f": {said[-1]}" if said else ""
        raise ClipboardError(f"{command[0]} could not read the clipboard{detail}.")
    return out
