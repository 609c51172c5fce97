"""Skills (SPEC §10): folders with a `SKILL.md` whose instructions the model reads on demand.

The system prompt carries only each switched-on skill's name and description;
the model calls `use_skill(name)` for the instructions when one fits, so a
dozen skills cost a dozen lines per round, not a dozen documents. Skills come
from three places, later wins by name: bundled with the package, the user's
(`<config dir>/skills/`), the workspace's (`.agent/skills/`). A workspace
skill needs no trust step (unlike an MCP server it runs nothing; it is text
the model reads, as it reads the project's AGENTS.md).

Switches are global per skill name (`<data dir>/skills.json`), not per
workspace: a name means the same skill to the person wherever they are, and
`agent skills disable X` should not quietly hold in one folder only. A skill
wanted in one project only belongs in that project's `.agent/skills/`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from agent_cli import paths
from agent_cli.errors import UnknownSkill
from agent_cli.tools.base import Effect, Tool, ToolContext, ToolResult, tool

Source = Literal["bundled", "user", "workspace"]

SKILL_FILE = "SKILL.md"
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "skills"
SKILL_FILE_CAP = 256 * 1024  # a SKILL.md is instructions, not a data file
NAME_CAP = 64
DESCRIPTION_CAP = 1024  # the description goes into every round's system prompt
FIELDS = ("name", "description", "title")
# What a person who wrote a broken SKILL.md reads: the format, and a working example.
FORMAT_HINT = (
    "a SKILL.md starts with '---', a 'name: ...' and a 'description: ...' line, and '---' "
    "(see one with `agent skills show review-change`)"
)

_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*))?")
_BLOCK = re.compile(r"[|>][+-]?")
# A plain value starting with one of these means something else to YAML (a list, an alias...).
_INDICATORS = frozenset("[]{}&*!|>@`%,")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    title: str
    instructions: str
    path: Path  # the SKILL.md file
    source: Source

    @property
    def folder(self) -> Path:
        """The skill's folder: paths its instructions mention are relative to it."""
        return self.path.parent


class FrontMatterError(ValueError):
    """A SKILL.md whose front matter this reader refuses; the message says where and why."""


# ------------------------------------------------------------ front matter


def parse_skill_file(text: str) -> tuple[dict[str, str], str]:
    """Split a SKILL.md into its front-matter fields (`FIELDS` only) and its body."""
    fields, body = parse_front_matter(text, FIELDS)
    return {key: value for key, value in fields.items() if isinstance(value, str)}, body


def parse_front_matter(
    text: str, scalars: tuple[str, ...], lists: tuple[str, ...] = ()
) -> tuple[dict[str, str | list[str]], str]:
    """Split a Markdown file into the front-matter fields named in `scalars` and
    `lists`, and its body (a SKILL.md here, a sub-agent definition in `backends`).

    Not PyYAML, on purpose: it is not a dependency (and importing it would
    slow startup), and full YAML reads `name: no` as False and `title: 1.0`
    as a float — silent surprises for three strings. This reads the subset
    skills use: `key: value` lines whose value is plain, "double-quoted" or
    'single-quoted', possibly continued on indented lines, or a `>`/`|`
    block. Indented lines under other keys (another tool's `metadata:` map
    or `allowed-tools:` list) are passed over, not interpreted. Anything
    else, or a value YAML would read differently from us, is an error, so a
    mistake is reported instead of guessed at. Values become one line. A key
    in `lists` may also be a `- item` block list, a `[a, b]` flow list or a
    comma-separated line; it becomes a list of strings.
    """
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        raise FrontMatterError("it does not start with a front-matter line '---'")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise FrontMatterError("its front matter has no closing '---' line")
    entries: list[tuple[str, str, list[str], int]] = []
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        if line[0] in " \t" or (line.startswith("- ") and entries and not entries[-1][1]):
            if not entries:
                raise FrontMatterError(f"line {number} is indented but follows no key")
            entries[-1][2].append(line.strip())
            continue
        match = _KEY.fullmatch(line.rstrip())
        if match is None:
            raise FrontMatterError(f"line {number} is not 'key: value'")
        key = match.group(1)
        if any(key == seen for seen, *_ in entries):
            raise FrontMatterError(f"line {number} repeats the key {key!r}")
        entries.append((key, (match.group(2) or "").strip(), [], number))
    fields: dict[str, str | list[str]] = {}
    for key, value, more, number in entries:
        if key in lists:
            fields[key] = _list(value, more, number)
        elif key in scalars:
            fields[key] = _scalar(value, more, number)
    return fields, "\n".join(lines[end + 1 :]).strip()


def _list(value: str, more: list[str], number: int) -> list[str]:
    """A front-matter list: `- item` lines, `[a, b]`, or `a, b` on the key's line."""
    if not value and more and all(line.startswith("- ") or line == "-" for line in more):
        return [_scalar(line[2:].strip(), [], number) for line in more if line[2:].strip()]
    joined = " ".join([value, *more]).strip()
    if joined.startswith("["):
        if not joined.endswith("]"):
            raise FrontMatterError(f"line {number} has a '[' list that is not closed")
        joined = joined[1:-1]
    return [_scalar(part.strip(), [], number) for part in joined.split(",") if part.strip()]


def _scalar(value: str, more: list[str], number: int) -> str:
    """One front-matter value as a single line of text."""
    if _BLOCK.fullmatch(value):
        if not more:
            raise FrontMatterError(f"line {number} starts a block but no indented lines follow")
        return " ".join(" ".join(more).split())
    joined = " ".join([value, *more]).strip()
    quote = joined[:1]
    if quote == '"':
        try:
            text = json.loads(joined)  # YAML's common escapes are JSON's
        except ValueError:
            raise FrontMatterError(
                f"line {number} has a double-quoted value that is not closed, has text "
                "after its closing quote, or has an escape this reader does not know"
            ) from None
        return " ".join(text.split())
    if quote == "'":
        inner = joined[1:-1] if len(joined) > 1 and joined.endswith("'") else None
        if inner is None or "'" in inner.replace("''", ""):
            raise FrontMatterError(f"line {number} has a single-quoted value that is not closed")
        return " ".join(inner.replace("''", "'").split())
    if quote in _INDICATORS or joined[:2] in ("- ", "? ", ": "):
        raise FrontMatterError(f"line {number}: a value starting with {quote!r} must be quoted")
    if " #" in joined:
        raise FrontMatterError(f"line {number}: quote a value containing ' #' (YAML cuts it)")
    return " ".join(joined.split())


# ---------------------------------------------------------------- loading


class _Skip(Exception):
    """Why one SKILL.md is left out; becomes a warning."""


def load_skill(folder: Path, source: Source) -> Skill:
    """The skill in `folder`, or `_Skip` saying why it cannot be used."""
    file = folder / SKILL_FILE
    try:
        if file.stat().st_size > SKILL_FILE_CAP:
            raise _Skip(f"it is larger than {SKILL_FILE_CAP // 1024} KiB")
        data = file.read_bytes()
    except OSError as e:
        raise _Skip(f"it could not be read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Skip("it is not UTF-8 text") from None
    if "\x00" in text:
        raise _Skip("it is a binary file, not text")
    try:
        fields, body = parse_skill_file(text)
    except FrontMatterError as e:
        raise _Skip(f"{e} — {FORMAT_HINT}") from None
    name, description = fields.get("name", ""), fields.get("description", "")
    if not name:
        raise _Skip("its front matter has no 'name'")
    if not _KEBAB.fullmatch(name) or len(name) > NAME_CAP:
        raise _Skip(f"its name {name!r} is not kebab-case (like 'review-change', ≤ 64 chars)")
    if name != folder.name:
        raise _Skip(f"its name {name!r} is not its folder's name {folder.name!r}")
    if not description:
        raise _Skip("its front matter has no 'description'")
    if len(description) > DESCRIPTION_CAP:
        raise _Skip(f"its description is longer than {DESCRIPTION_CAP} characters")
    if not body:
        raise _Skip("it has no instructions after the front matter")
    title = fields.get("title") or name.replace("-", " ").capitalize()
    return Skill(name, description, title, body, file, source)


def skill_roots(workspace: Path) -> list[tuple[Source, Path]]:
    """The three places skills come from, in precedence order (later wins)."""
    return [
        ("bundled", BUNDLED_DIR),
        ("user", paths.config_dir() / "skills"),
        ("workspace", workspace / ".agent" / "skills"),
    ]


def _skill_folders(root: Path, warnings: list[str]) -> list[Path]:
    """The folders directly under `root` that hold a SKILL.md (never deeper)."""
    try:
        with os.scandir(root) as entries:
            names = sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        return []
    except OSError as e:
        warnings.append(f"skipped the skills folder {root}: {e.strerror or e}")
        return []
    return [root / n for n in names if (root / n / SKILL_FILE).is_file()]


# ----------------------------------------------------------------- skills


class Skills:
    """The skills one workspace sees, with their switches; `discover` builds it."""

    def __init__(
        self,
        skills: list[Skill],
        warnings: list[str],
        disabled: set[str],
        state_file: Path,
        workspace: Path,
    ) -> None:
        self.all = sorted(skills, key=lambda s: s.name)
        self.warnings = warnings
        self._disabled = disabled
        self._state_file = state_file
        self._workspace = workspace

    @classmethod
    def discover(
        cls,
        workspace: Path,
        *,
        roots: list[tuple[Source, Path]] | None = None,
        state_file: Path | None = None,
    ) -> Skills:
        """Read the SKILL.md files of the three places; bad ones become `warnings`."""
        found: dict[str, Skill] = {}
        warnings: list[str] = []
        for source, root in roots if roots is not None else skill_roots(workspace):
            for folder in _skill_folders(root, warnings):
                try:
                    skill = load_skill(folder, source)
                except _Skip as e:
                    warnings.append(f"skipped {folder / SKILL_FILE}: {e}")
                    continue
                found[skill.name] = skill
        state_file = state_file or paths.data_dir() / "skills.json"
        disabled = _read_switches(state_file, warnings)
        return cls(list(found.values()), warnings, disabled, state_file, workspace)

    def enabled(self) -> list[Skill]:
        return [s for s in self.all if s.name not in self._disabled]

    def is_enabled(self, name: str) -> bool:
        return name not in self._disabled

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.all if s.name == name), None)

    def set_enabled(self, name: str, on: bool) -> None:
        """Switch a skill on or off for every workspace, and store it at once.

        The file is read again first, so a switch made meanwhile by another
        `agent` process is kept rather than overwritten.
        """
        if self.get(name) is None:
            raise UnknownSkill(f"No skill is named {name!r} — `agent skills list` shows them.")
        disabled = _read_switches(self._state_file, [])
        (disabled.discard if on else disabled.add)(name)
        _write_switches(self._state_file, disabled)
        self._disabled = disabled

    def prompt_lines(self) -> list[tuple[str, str]]:
        """(name, description) of the switched-on skills, for the system prompt."""
        return [(s.name, s.description) for s in self.enabled()]

    def use(self, name: str) -> ToolResult:
        """What `use_skill(name)` answers: the instructions, or an error naming the choices."""
        skill = self.get(name)
        if skill is None or not self.is_enabled(name):
            names = ", ".join(s.name for s in self.enabled()) or "none"
            why = "is switched off" if skill else "does not exist"
            return ToolResult(f"The skill {name!r} {why}. Available skills: {names}.", True)
        try:
            where = skill.folder.relative_to(self._workspace).as_posix()
            note = "paths these instructions mention are relative to it"
        except ValueError:
            where, note = str(skill.folder), "outside the workspace"
        header = f"Skill {skill.name} ({skill.title}). Folder: {where} ({note})."
        return ToolResult(f"{header}\n\n{skill.instructions}\n")


def _read_switches(state_file: Path, warnings: list[str]) -> set[str]:
    """The names switched off, from `{"disabled": [...]}`; a bad file counts as none."""
    try:
        data: Any = json.loads(state_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError):
        data = None
    disabled = data.get("disabled") if isinstance(data, dict) else None
    if not isinstance(disabled, list) or not all(isinstance(n, str) for n in disabled):
        warnings.append(f"ignored {state_file}: it is not valid — delete it to start afresh")
        return set()
    return set(disabled)


def _write_switches(state_file: Path, disabled: set[str]) -> None:
    """Replace the switches file atomically: a crash leaves the old one or the new one."""
    state_file.parent.mkdir(parents=True, exist_ok=True)
    temporary = state_file.with_name(f".{state_file.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"disabled": sorted(disabled)}, indent=2) + "\n")
    os.replace(temporary, state_file)


# ------------------------------------------------------------------- tool


def _title(arguments: Mapping[str, Any]) -> str:
    return f"Use skill {arguments.get('name') or '…'}"


def use_skill_tool(skills: Skills) -> Tool:
    """The `use_skill(name)` tool over `skills`; switches are read at each call."""

    @tool("use_skill", Effect.READ, title=_title)
    async def use_skill(
        ctx: ToolContext,
        name: Annotated[str, "The skill's name, as listed under Skills in the system prompt."],
    ) -> ToolResult:
        """Read the instructions of one of the skills listed in the system prompt.

        Call it when a skill fits the task, before you start on the task, then
        follow the instructions it returns.
        """
        return skills.use(name)

    return use_skill
