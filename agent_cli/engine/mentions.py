"""`@path` in a message attaches what it names: a file's text, a folder's listing, an image.

What is attached is the person's context for that one message (see media.Attachment):
read once, when the message is sent, and confined to the workspace exactly as the
file tools are (`Workspace.resolve`: no `..`, absolute path or link leads out). A
mention of something that is not there stays plain text (`@someone`, an email
address); one that cannot be attached (outside, binary, too big) is said in a
notice and the message still goes.

Written `@src/util.py` or, for a name with spaces, `@"my notes.md"`. Punctuation
right after a path (`see @a.py, then`) is not part of it unless the file's name
really ends so.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from agent_cli.errors import ImageError
from agent_cli.media import SNIFF_BYTES, Attachment, Image, Prompt, image_from_bytes, sniff
from agent_cli.tools.base import MODEL_RESULT_CAP, cap_for_model
from agent_cli.tools.files import READ_FILE_MAX_BYTES
from agent_cli.tools.search import walk
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

__all__ = ["LISTING_LIMIT", "TRAILING", "Attached", "attach_mentions", "mentions"]

# `@` after a space or at the start (not inside an email address), then a quoted
# name or a run of non-space characters.
_MENTION = re.compile(r'(?<![\w@])@(?:"([^"\n]+)"|([^\s"]+))')
TRAILING = ".,;:!?)]}'"
LISTING_LIMIT = 200  # entries of a folder's listing (two levels deep)
LISTING_DEPTH = 2


class Attached(NamedTuple):
    """The message with what its mentions attached, and why any could not be."""

    prompt: Prompt
    problems: list[str]


def mentions(text: str) -> list[str]:
    """The paths a message mentions with `@`, in order, each once (trailing punctuation
    kept: `attach_mentions` drops it when the path is not found with it)."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1) or match.group(2)
        if path and path not in found:
            found.append(path)
    return found


def attach_mentions(prompt: Prompt, workspace: Workspace, skip: Collection[str] = ()) -> Attached:
    """The prompt with each `@path` it mentions attached (blocking: run it in a thread);
    the mentions in `skip` are not paths (`@server:uri`, attached already)."""
    attachments, images = list(prompt.attachments), list(prompt.images)
    problems: list[str] = []
    labels = {a.label for a in attachments}
    for mention in mentions(prompt.text):
        if mention in skip:
            continue
        try:
            found = _attachment(mention, workspace)
        except _Refused as refused:
            problems.append(str(refused))
            continue
        if isinstance(found, Image):
            if found not in images:
                images.append(found)
        elif found is not None and found.label not in labels:
            labels.add(found.label)
            attachments.append(found)
    attached = replace(prompt, attachments=tuple(attachments), images=tuple(images))
    return Attached(attached, problems)


class _Refused(Exception):
    """A mention that names something which cannot be attached; the message says why."""


def _attachment(mention: str, workspace: Workspace) -> Attachment | Image | None:
    for path in _spellings(mention):
        try:
            real = workspace.resolve(path)
        except OutsideWorkspace as exc:
            if _exists_unconfined(workspace, path):
                raise _Refused(f"@{path} is not attached: {exc}") from None
            continue
        shown = workspace.relative(real)
        try:  # opened as read_file opens a file: no link followed, a FIFO does not block
            fd = workspace.open_file(real)
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there (with this spelling): plain text
        except OutsideWorkspace as exc:
            raise _Refused(f"@{path} is not attached: {exc}") from None
        except OSError as exc:
            why = f"it could not be read ({exc.strerror})"
            raise _Refused(f"@{shown} is not attached: {why}.") from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):  # listed by this same descriptor
                return Attachment("folder", shown + "/" if shown != "." else ".", _listing(fd))
            return _file(fd, shown, st)
        finally:
            os.close(fd)
    return None


def _spellings(mention: str) -> list[str]:
    """The mention as written, then without the punctuation that may follow a path."""
    stripped = mention.rstrip(TRAILING)
    return [mention, stripped] if stripped and stripped != mention else [mention]


def _exists_unconfined(workspace: Workspace, path: str) -> bool:
    """Whether a refused path names something real (else it is just text with an @)."""
    candidate = Path(path) if os.path.isabs(path) else workspace.root / path
    try:
        return os.path.lexists(candidate)
    except (OSError, ValueError):
        return False


def _file(fd: int, shown: str, st: os.stat_result) -> Attachment | Image:
    """The file open as `fd` (`st` its fstat), attached as text or an image."""
    if not stat.S_ISREG(st.st_mode):
        raise _Refused(f"@{shown} is not attached: it is not a regular file.")
    if st.st_size > READ_FILE_MAX_BYTES:
        raise _Refused(
            f"@{shown} is not attached: it is too big ({st.st_size} bytes; the limit is "
            f"{READ_FILE_MAX_BYTES})."
        )
    try:
        data = _read_all(fd, READ_FILE_MAX_BYTES + 1)
    except OSError as exc:
        why = f"it could not be read ({exc.strerror})"
        raise _Refused(f"@{shown} is not attached: {why}.") from None
    if sniff(data[:SNIFF_BYTES]) is not None:
        try:
            return image_from_bytes(data, shown)
        except ImageError as exc:
            raise _Refused(f"@{shown} is not attached: {exc}") from None
    text = _text(data)
    if text is None:
        raise _Refused(f"@{shown} is not attached: it is a binary file ({len(data)} bytes).")
    return Attachment("file", shown, cap_for_model(text, MODEL_RESULT_CAP))


def _text(data: bytes) -> str | None:
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_all(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes of the file open as `fd` (a read may return fewer at once)."""
    chunks, left = [], limit
    while left and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _listing(folder: int) -> str:
    """The folder open as `folder`, walked by descriptor (a folder in it swapped for a link
    is not entered)."""
    lines: list[str] = []
    for relative, _entry, is_dir in walk(folder, max_depth=LISTING_DEPTH):
        if len(lines) == LISTING_LIMIT:
            lines.append(f"[... more entries; only the first {LISTING_LIMIT} are listed]")
            break
        lines.append(relative + ("/" if is_dir else ""))
    return "\n".join(lines) if lines else "(empty folder)"
