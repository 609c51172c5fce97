"""Confine every path the agent touches to one folder: the workspace.

The model names files as plain strings, and a string is an easy way out of a
sandbox: ``../``, an absolute path, ``~``, or a symbolic link placed (or found)
inside the project that points elsewhere. `Workspace.resolve` turns a path into
the *real* file it denotes, the way the kernel would, and refuses it with
`OutsideWorkspace` unless that real path lies inside the workspace root.

How a path is resolved (Linux and macOS; Windows is not a target):

* Relative paths start at the root; absolute ones are accepted only if they
  land inside it. ``""`` and ``"."`` mean the root itself.
* Components are walked one by one with ``lstat``/``readlink``, never with
  ``os.path.realpath``, which in Python 3.11 quietly returns a path for loops
  and dangling links. ``..`` is applied to the real (already resolved) parent,
  as the kernel does, so ``link/..`` is the parent of the link's target.
* A symbolic link loop, or more than 40 links in one path (the kernel's own
  limit), is refused. So is a dangling link, for reads and for writes: writing
  through it would create its target wherever it points.
* The part of a path that does not exist yet is fine (a write may create it; a
  read will report "not found" itself). Its missing components are taken to be
  the plain folders a write would create, so ``new/../x`` is ``x`` and the rest
  is still resolved; nothing after a missing component can be a link.
* A leading ``~`` is refused, never expanded: a model writing ``~/x`` means the
  home folder. ``./~`` names a file literally called ``~``.
* NUL bytes, and strings that cannot be encoded as file names, are refused.

``write=True`` additionally refuses the root itself and anything named
``.git``, or inside a ``.git``, at any depth (compared case-insensitively and
ignoring the characters HFS+ ignores, as git does), including anything reached
through a link named ``.git``: git runs hooks and reads ``.git/config``, so
writing there could run code. Reading inside ``.git`` is fine.

The check and the later use of a path are separate system calls, and a process
running beside the agent (a background command the model started) can swap a
folder for a link in between, or while an approval card waits. So the file tools
do not open a resolved path by name: `open_file` and `folder_of` walk it again
from the root one component at a time, never following a link (`O_NOFOLLOW`),
and a folder that became a link since is refused rather than followed out.
Out of scope: hard links to files outside are indistinguishable from files
inside.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["FOLDER_FLAGS", "MAX_SYMLINKS", "OutsideWorkspace", "Workspace"]

MAX_SYMLINKS = 40
"""Links followed in one path before it is refused as a loop (Linux's MAXSYMLINKS)."""

# Code points HFS+ ignores in names, so ".g\u200cit" is ".git" there (git's is_hfs_dotgit).
_HFS_IGNORED = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
"""How a folder is opened to work inside it by descriptor (add O_NOFOLLOW for a name)."""
_FOLDER = FOLDER_FLAGS
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


class OutsideWorkspace(ValueError):
    """A path was refused: it leaves the workspace, or may not be touched as asked.

    The message is one sentence meant for the user or the model; `path` is the
    path as it was given.
    """

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


def _is_dotgit(name: str) -> bool:
    return name.translate(_HFS_IGNORED).casefold() == ".git"


class Workspace:
    """The folder the agent runs in; see the module docstring for the rules."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        real = os.path.realpath(os.fspath(root), strict=True)
        if not os.path.isdir(real):
            raise NotADirectoryError(f"the workspace root {real} is not a folder")
        self.root: Path = Path(real)
        self._root = real
        self._prefix = real if real.endswith("/") else real + "/"

    def __repr__(self) -> str:
        return f"Workspace({self._root!r})"

    def resolve(self, path: str | os.PathLike[str], write: bool = False) -> Path:
        """Return the real, absolute path `path` denotes, or raise `OutsideWorkspace`.

        With ``write=True``, the root itself and anything named ``.git`` or inside
        a ``.git`` folder (at any depth) are refused too, because git may run code
        from there. The path need not exist.
        """
        raw = self._spelling(path)
        real, git_dirs = self._walk(raw)
        if not self._inside(real):
            lexical = os.path.normpath(os.path.join(self._root, raw))
            if self._inside(lexical):
                raise OutsideWorkspace(
                    f"{raw!r} leads outside the workspace {self._root} through a symbolic "
                    f"link (to {real}); use a path inside it.",
                    raw,
                )
            raise OutsideWorkspace(
                f"{raw!r} is outside the workspace {self._root}; use a path inside it.", raw
            )
        if write:
            if real == self._root:
                raise OutsideWorkspace(
                    f"{raw!r} is the workspace root {self._root} itself, which cannot be "
                    "written; name a file inside it.",
                    raw,
                )
            if any(_is_dotgit(part) for part in real[len(self._prefix) :].split("/")) or any(
                real == git_dir or real.startswith(git_dir.rstrip("/") + "/")
                for git_dir in git_dirs
            ):
                raise OutsideWorkspace(
                    f"{raw!r} is in a .git folder ({self.relative(real)}), which cannot be "
                    "written because git may run code from it; edit files outside .git.",
                    raw,
                )
        return Path(real)

    def folder_of(self, real: str | os.PathLike[str], create: bool = False) -> int:
        """A descriptor of the folder holding `real` (a path `resolve` returned), reached from
        the root one name at a time without following a link, making missing folders when
        `create`. Create, read, replace and rename relative to it (`dir_fd=`): no later
        swap of a folder on the path can redirect them. The caller closes it."""
        return self._folder(real, self._names(real)[:-1], create)

    def open_folder(self, real: str | os.PathLike[str]) -> int:
        """The folder `real` itself, opened as `folder_of` opens one (to list it by its
        descriptor). The caller closes it."""
        names = self._names(real)
        return self._folder(real, names if names != ["."] else [], False)

    def _folder(self, real: str | os.PathLike[str], names: list[str], create: bool) -> int:
        fd = os.open(self._root, _FOLDER)
        try:
            for name in names:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=fd)
                inner = self._open_in(fd, name, _FOLDER, real)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, real: str | os.PathLike[str]) -> int:
        """`real` opened read-only the same way (no link followed anywhere on its path; a FIFO
        swapped in does not block the open). The caller closes it."""
        folder = self.folder_of(real)
        try:
            return self._open_in(folder, self._names(real)[-1], _READ, real)
        finally:
            os.close(folder)

    def _names(self, real: str | os.PathLike[str]) -> list[str]:
        relative = self.relative(real)
        return relative.split("/") if relative != "." else ["."]

    def _open_in(self, folder: int, name: str, flags: int, real: str | os.PathLike[str]) -> int:
        """`name` in `folder`, not following a link: one found there (ELOOP, or ENOTDIR for a
        folder) means the path changed since `resolve`, and is refused as such."""
        try:
            return os.open(name, flags | os.O_NOFOLLOW, dir_fd=folder)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            if not link:
                raise
        shown = self.relative(real)
        raise OutsideWorkspace(
            f"{shown!r} changed while it was in use (a folder or the file on its path became "
            "a symbolic link), so the link was not followed; check what changed it.",
            shown,
        )

    def relative(self, path: str | os.PathLike[str]) -> str:
        """Return the POSIX workspace-relative form of a resolved path ("." for the root)."""
        real = os.path.normpath(os.fspath(path))
        if real.startswith("//"):  # normpath keeps a leading "//"; it is "/" here
            real = "/" + real.lstrip("/")
        if real == self._root:
            return "."
        if not real.startswith(self._prefix):
            raise OutsideWorkspace(
                f"{real!r} is outside the workspace {self._root}; use a path inside it.", real
            )
        return real[len(self._prefix) :]

    def _inside(self, real: str) -> bool:
        return real == self._root or real.startswith(self._prefix)

    def _spelling(self, path: str | os.PathLike[str]) -> str:
        """Check the path as written: refuse NULs, unencodable strings and ``~``."""
        raw = os.fspath(path)
        if isinstance(raw, bytes):
            raw = os.fsdecode(raw)
        if not isinstance(raw, str):
            raise TypeError(f"expected a str or os.PathLike path, got {type(path).__name__}")
        if "\0" in raw:
            raise OutsideWorkspace(
                f"{raw!r} contains a NUL byte, which no file name can hold; use a plain path "
                "inside the workspace.",
                raw,
            )
        try:
            os.fsencode(raw)
        except UnicodeError:
            raise OutsideWorkspace(
                f"{raw!r} cannot be encoded as a file name; use a plain path inside the workspace.",
                raw,
            ) from None
        if raw.startswith("~"):
            raise OutsideWorkspace(
                f"{raw!r} starts with '~', which is not expanded here and would mean a home "
                f"folder outside the workspace {self._root}; use a path inside it.",
                raw,
            )
        return raw

    def _show(self, real: str) -> str:
        """`real` relative to the root when inside it, else absolute (for messages)."""
        return self.relative(real) if self._inside(real) else real

    def _walk(self, raw: str) -> tuple[str, list[str]]:
        """Resolve `raw` like the kernel would; also return the targets of links named .git.

        A link named ``.git`` makes its target a git folder even when the target's
        own name is innocent, so writes below it must be refused too.
        """
        current = "/" if raw.startswith("/") else self._root
        # Components still to visit, last one first; None closes a link's expansion.
        pending: list[str | None] = list(reversed(raw.split("/")))
        links: list[str] = []  # links being expanded, outermost first
        missing: list[str] = []  # trailing components that do not exist (yet)
        git_dirs: list[str] = []
        followed = 0
        while pending:
            name = pending.pop()
            if name is None:
                # The link's target is fully resolved (a missing part would be dangling).
                if _is_dotgit(os.path.basename(links.pop())):
                    git_dirs.append(current)
                continue
            if name in ("", "."):
                continue
            if name == "..":
                if missing:
                    missing.pop()
                else:
                    current = os.path.dirname(current)
                continue
            if missing:
                missing.append(name)
                continue
            candidate = os.path.join(current, name)
            try:
                mode = os.lstat(candidate).st_mode
            except (FileNotFoundError, NotADirectoryError):
                if links:
                    raise OutsideWorkspace(
                        f"{raw!r} goes through the dangling symbolic link "
                        f"{self._show(links[0])}, which is refused because writing through it "
                        f"could create its target anywhere, even outside the workspace "
                        f"{self._root}; use a path without it.",
                        raw,
                    ) from None
                missing.append(name)
                continue
            except OSError as exc:
                raise OutsideWorkspace(
                    f"{raw!r} could not be checked against the workspace {self._root} "
                    f"({exc.strerror or exc}); use a path inside it.",
                    raw,
                ) from None
            if not stat.S_ISLNK(mode):
                current = candidate
                continue
            followed += 1
            if followed > MAX_SYMLINKS:
                raise OutsideWorkspace(
                    f"{raw!r} goes through a symbolic link loop (or more than {MAX_SYMLINKS} "
                    f"links), so it cannot be confirmed to stay inside the workspace "
                    f"{self._root}; use a path without it.",
                    raw,
                )
            try:
                target = os.readlink(candidate)
            except OSError as exc:
                raise OutsideWorkspace(
                    f"{raw!r} could not be checked against the workspace {self._root} "
                    f"({exc.strerror or exc}); use a path inside it.",
                    raw,
                ) from None
            if target.startswith("/"):
                current = "/"
            links.append(candidate)
            pending.append(None)
            pending.extend(reversed(target.split("/")))
        return os.path.join(current, *missing), git_dirs
