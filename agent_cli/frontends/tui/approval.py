"""The TUI's approval card (SPEC §8, §12): one modal screen per call that waits for a yes.

The loop awaits an `ApprovalRequest`; the app pushes `ApprovalScreen` with
`callback=request.resolve`, and the screen dismisses with a typed `Decision`.
The answers are the same as the inline card's (`frontends/inline_approval.py`)
so every front end means the same thing by each key. The screen never decides
anything itself: it shows what the call would do and reports the answer.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import zip_longest
from pathlib import Path
from typing import ClassVar, Literal

from rich.syntax import Syntax
from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Click
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from unidiff import PatchSet, UnidiffParseError
from unidiff.patch import Hunk, Line

from agent_cli.engine.approval import ApprovalRequest, Decision, Scope
from agent_cli.frontends.tui.diff_view import (
    DiffView,
    highlighted,
    lexer_for,
    parse,
    syntax_theme,
)
from agent_cli.frontends.tui.markdown_render import renderer_for
from agent_cli.policy.modes import MODES, reads_only, switched_to
from agent_cli.policy.rules import NO_RULE, split_rules

Stage = Literal["card", "reason", "always", "hunks", "mode"]
WIDE = 160  # columns from which two files side by side stay readable
SCOPES: dict[str, Scope] = {"c": "conversation", "p": "project", "e": "everywhere"}
SCOPE_TEXT: dict[Scope, str] = {
    "conversation": "this conversation",
    "project": "this project (kept in your data folder, not in the repository)",
    "everywhere": "everywhere",
}
NO_HUNKS = "The person accepted none of the hunks."
TO_READ_ONLY = switched_to("read-only")
HELP: dict[Stage, str] = {
    "reason": "[b]enter[/] send the reason  [b]esc[/] no, without a reason",
    "always": "[b]c[/]/[b]p[/]/[b]e[/] or [b]enter[/] allow in that scope  [b]tab[/] edit the rule",
    "hunks": "[b]space[/]/click toggle  [b]enter[/]/[b]a[/] accept the chosen hunks",
    "mode": "[b]enter[/] switch to the highlighted mode",
}
# Which of the screen's own actions each stage answers; other keys fall through to the widgets.
STAGE_ACTIONS: dict[Stage, set[str]] = {
    "card": {"yes", "no", "always", "edit", "hunks", "mode", "split", "back"},
    "reason": {"back"},
    "always": {"scope", "edit", "back"},
    "hunks": {"always", "accept", "back"},
    "mode": {"back"},
}
OWN_ACTIONS = set().union(*STAGE_ACTIONS.values())
CARD_KEYS = {"edit": "e", "hunks": "h", "split": "s"}  # actions a card may not offer
CARD_SHARE = 0.9  # of the screen's height, the most the card takes (approval.tcss)
BODY_SHARE = {True: 0.35, False: 0.7}  # the diff's most, while asking (a panel shows) or not


def parse_hunks(diff: str) -> list[Hunk]:
    """The diff's hunks in order; an unreadable diff offers no hunk picking rather than failing."""
    try:
        return [hunk for patched in PatchSet(diff) for hunk in patched]
    except UnidiffParseError:
        return []


def hunk_header(hunk: Hunk) -> str:
    old = f"-{hunk.source_start},{hunk.source_length}"
    new = f"+{hunk.target_start},{hunk.target_length}"
    return f"@@ {old} {new} @@ {hunk.section_header}".rstrip()


Colour = Callable[[str], Content]  # one line of code in the theme's syntax colours


def side_by_side(hunks: list[Hunk], colour: Colour = Content) -> tuple[Content, Content]:
    """Old lines left, new lines right, changed runs paired row by row so the sides line up;
    code coloured by `colour` (plain by default)."""
    rows: list[tuple[Line | str | None, Line | str | None]] = []
    for hunk in hunks:
        rows.append((hunk_header(hunk), hunk_header(hunk)))
        removed: list[Line] = []
        added: list[Line] = []
        for line in [*hunk, None]:
            if line is not None and (line.is_removed or line.is_added):
                (removed if line.is_removed else added).append(line)
            elif line is None or line.is_context:
                rows.extend(zip_longest(removed, added))
                removed, added = [], []
                rows.extend([(line, line)] if line is not None else [])
    old = _column([old for old, _ in rows], 0, colour)
    return old, _column([new for _, new in rows], 1, colour)


def _column(cells: list[Line | str | None], side: int, colour: Colour) -> Content:
    """One side; rows padded to one width so a changed row's background is a band."""
    shown = [cell for cell in cells if isinstance(cell, Line)]
    width = max((len(cell.value.rstrip("\n").expandtabs()) for cell in shown), default=0)
    numbers = [(cell.source_line_no, cell.target_line_no)[side] or 0 for cell in shown]
    digits = len(str(max(numbers, default=0)))
    lines: list[Content] = []
    for cell in cells:
        if isinstance(cell, str):
            lines.append(Content.styled(cell, "$accent"))
        elif cell is None:
            lines.append(Content(" " * (digits + 1 + width)))
        else:
            style = "$text-error on $error-muted" if cell.is_removed else ""
            style = "$text-success on $success-muted" if cell.is_added else style
            number = f"{(cell.source_line_no, cell.target_line_no)[side]:>{digits}} "
            text = cell.value.rstrip("\n").expandtabs()
            code = colour(text).pad_right(width - len(text))
            lines.append(Content.assemble((number, "$text-muted"), code.stylize_before(style)))
    return Content("\n").join(lines)


def run_editor(command: list[str], stdin: int | None = None) -> str | None:
    """What went wrong, or None. Never raises: `App.suspend` would not resume after an error."""
    try:
        code = subprocess.call(command, stdin=stdin)
    except OSError as e:  # not found, not executable
        return f"could not be run ({e}); set $VISUAL or $EDITOR"
    return f"exited with {code}" if code else None


# Answer keys typed this soon after the card opened are ignored: they were meant for the
# prompt the card came over.
KEY_GUARD_SECONDS = 0.4


class DiffText(Static):
    """A diff (or JSON) in the theme's Pygments style, as the transcript's diffs are."""

    def __init__(
        self, text: str, lexer: str = "diff", *, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.text, self.lexer = text, lexer

    def render(self) -> Syntax:
        theme = renderer_for(self.app).palette.code_theme
        # On the widget's own background (a theme variable), not the Pygments style's.
        background = self.background_colors[1].hex
        return Syntax(
            self.text, self.lexer, theme=theme, background_color=background, word_wrap=True
        )


class HunkChoice(Vertical, can_focus=True):
    """One hunk of the diff with its check mark; space or a click toggles it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_hunk", "Toggle the hunk", show=False),
        Binding("up", "app.focus_previous", show=False),
        Binding("down", "app.focus_next", show=False),
    ]
    chosen: var[bool] = var(True, init=False)

    def __init__(self, index: int, hunk: Hunk, total: int) -> None:
        super().__init__(classes="hunk")
        self.index, self.hunk, self.total = index, hunk, total

    def compose(self) -> ComposeResult:
        yield Static(self._label(), classes="hunk-label")
        body = "".join(str(line) for line in self.hunk)
        yield DiffText(body.rstrip("\n"), classes="hunk-body")

    def _label(self) -> Content:
        mark = "[x]" if self.chosen else "[ ]"
        return Content.assemble(
            (f"{mark} hunk {self.index + 1} of {self.total}  ", "bold"),
            (hunk_header(self.hunk), "$text-muted"),
        )

    def watch_chosen(self, chosen: bool) -> None:
        self.set_class(not chosen, "-off")
        for label in self.query(".hunk-label").results(Static):
            label.update(self._label())

    def action_toggle_hunk(self) -> None:
        self.chosen = not self.chosen

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.action_toggle_hunk()


class ApprovalScreen(ModalScreen[Decision]):
    """The card for one waiting call; dismisses with the person's `Decision`."""

    CSS_PATH = "approval.tcss"
    AUTO_FOCUS = ""  # the stage decides; a hidden reason Input must never catch `y`
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "yes", "yes"),
        Binding("n", "no", "no"),
        Binding("a", "always", "always"),
        Binding("e", "edit", "edit in $EDITOR"),
        Binding("h", "hunks", "pick hunks"),
        Binding("m", "mode", "mode"),
        Binding("s", "split", "side by side"),
        Binding("c", "scope('c')", show=False),
        Binding("p", "scope('p')", show=False),
        Binding("enter", "accept", show=False),
        Binding("escape", "back", "deny"),
    ]
    stage: var[Stage] = var[Stage]("card", init=False)
    split: var[bool] = var(False, init=False)

    def __init__(
        self,
        request: ApprovalRequest,
        set_mode: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.request = request
        self.set_mode = set_mode
        self.clock = clock
        self._shown_at: float | None = None  # when it opened: answer keys count from then on
        self.hunks = parse_hunks(request.diff) if request.kind == "edit" else []
        self._finished = False

    def compose(self) -> ComposeResult:
        item = self.request.item
        with Vertical(id="card") as card:
            card.border_title = item.title or item.tool
            card.border_subtitle = self._subtitle()
            yield from self._body()
            with Vertical(id="reason-panel", classes="panel"):
                yield Static("Why not? The model reads this (Enter for no reason).")
                yield Input(id="reason", placeholder="reason (optional)")
            with Vertical(id="always-panel", classes="panel"):
                yield Static(
                    self._always_heading(
                        "Always run commands matching this rule outside the sandbox:"
                        if self.request.outside
                        else "Always allow calls matching this rule:"
                    ),
                    id="always-heading",
                )
                # One field a rule: a compound line is offered one per simple command.
                for n, rule in enumerate(split_rules(self.request.suggested_rule) or [""]):
                    yield Input(rule, id="rule" if n == 0 else f"rule-{n + 1}", classes="rule")
                yield OptionList(
                    *[Option(f"{key}  {SCOPE_TEXT[s]}", id=s) for key, s in SCOPES.items()],
                    id="scope",
                )
            if self.hunks:
                with VerticalScroll(id="hunks-panel", classes="panel", can_focus=False):
                    total = len(self.hunks)
                    for index, hunk in enumerate(self.hunks):
                        yield HunkChoice(index, hunk, total)
            with Vertical(id="mode-panel", classes="panel"):
                yield Static("Switch the conversation's mode:")
                yield OptionList(*[Option(mode, id=mode) for mode in MODES], id="mode")
            yield Static(id="help")

    def _always_heading(self, one: str) -> str:
        """What "always" keeps: ONE rule, each rule of a compound line, or none at all."""
        rules = split_rules(self.request.suggested_rule)
        if not rules and self.request.kind == "command":
            return NO_RULE
        if len(rules) > 1:
            return (
                f"Every command of the line must match one of these {len(rules)} rules; "
                "all of them are kept:"
            )
        return one

    def _subtitle(self) -> str:
        """What kind of call: an MCP server's tool (and its own claim), or the diff's size."""
        if self.request.item.mcp:
            # MCP's readOnlyHint is the server's claim, shown but never trusted (SPEC §8).
            return self.request.item.mcp_label
        if self.request.outside:
            return "command · outside the sandbox"
        if not self.hunks:
            return self.request.kind
        added = sum(hunk.added for hunk in self.hunks)
        removed = sum(hunk.removed for hunk in self.hunks)
        count = f"{len(self.hunks)} hunk{'s' if len(self.hunks) > 1 else ''}"
        return f"edit: {count}, +{added} −{removed}"

    def _body(self) -> Iterator[Widget]:
        request = self.request
        if request.kind == "command":
            # Scrolled as a diff is: a heredoc of many lines must not push the keys off.
            with VerticalScroll(id="call", classes="body"):
                yield Static(
                    Content.assemble(
                        ("$ ", "bold"), (request.command, "bold $accent"), "\nin ", request.cwd
                    ),
                    id="command",
                )
                if request.outside:
                    yield Static(
                        Content.assemble(
                            ("The sandbox stopped it: ", "bold $warning"),
                            f"{request.outside}.\nRun it again outside the sandbox, unconfined?",
                        ),
                        id="outside",
                    )
        elif request.diff:
            with VerticalScroll(id="unified", classes="body"):
                yield DiffView(request.diff, id="diff")
            if self.hunks:
                old, new = side_by_side(self.hunks, self._colour(request.diff))
                with VerticalScroll(id="split", classes="body"), Horizontal(id="columns"):
                    yield Static(old, id="old")
                    yield Static(new, id="new")
        else:
            with VerticalScroll(id="arguments", classes="body"):
                yield self._arguments()

    def _colour(self, diff: str) -> Colour:
        """Syntax colours for the side-by-side view, by the file's name, as the unified
        view has them (in the theme's code style when the card opened)."""
        lexer = lexer_for(parse(diff)[1])
        if lexer is None:
            return Content
        theme = syntax_theme(renderer_for(self.app).palette.code_theme)
        return lambda code: Content.from_rich_text(highlighted(code, lexer, theme))

    def _arguments(self) -> Widget:
        try:
            text = json.dumps(json.loads(self.request.item.args or "{}"), indent=2)
        except ValueError:  # not JSON (a model's broken arguments): show them as written
            return Static(Content(self.request.item.args))
        return DiffText(text, "json")

    def on_mount(self) -> None:
        self._shown_at = self.clock()
        self._show_stage()
        # The request may be answered elsewhere (another front end, or the run stopped).
        self.set_interval(0.1, self._check_done)

    def on_resize(self) -> None:
        if not self.wide:
            self.split = False
        self._show_stage()

    def _fit(self) -> None:
        """The diff (or the hunk list) gets what the card's other parts leave, so the keys
        below it stay on screen on a short terminal; it scrolls inside the card."""
        card = self.query_one("#card")
        height = self.size.height
        scrolled = [w for w in card.children if w.has_class("body") or w.id == "hunks-panel"]
        others = sum(  # margins summed: a little room lost where two meet, never too little
            child.outer_size.height + child.styles.margin.height
            for child in card.children
            if child.display and child not in scrolled
        )
        room = int(height * CARD_SHARE) - card.styles.gutter.height - others
        share = int(height * BODY_SHARE[card.has_class("-asking")])
        for widget in scrolled:
            # None at all on a tiny terminal while asking: the question and its keys come first.
            widget.styles.max_height = max(0, min(room, share))

    @property
    def wide(self) -> bool:
        return self.app.size.width >= WIDE

    def _show_stage(self) -> None:
        """Show the panel of the current stage, focus its first control, and its keys."""
        stage = self.stage
        # The call stays in view while asking; the hunk list shows the diff itself.
        self.query_one("#card").set_class(stage not in ("card", "hunks"), "-asking")
        for body in self.query(".body"):
            body.display = stage != "hunks"
            body.can_focus = stage == "card"  # so tab moves between the panel's own controls
        if self.split:
            self.query_one("#unified").display = False
        elif self.query("#split"):
            self.query_one("#split").display = False
        for name in ("reason", "always", "hunks", "mode"):
            for panel in self.query(f"#{name}-panel"):
                panel.display = stage == name
        focus = {"reason": "#reason", "always": "#scope", "hunks": ".hunk", "mode": "#mode"}
        if stage in focus:
            self.query(focus[stage]).first().focus()
        else:  # the diff or arguments, so the arrow keys scroll them
            for body in self.query(".body"):
                if body.display:
                    body.focus()
                    break
        self.query_one("#help", Static).update(Content.from_markup(self._help()))
        self.refresh_bindings()
        self.call_after_refresh(self._fit)

    watch_stage = watch_split = _show_stage

    def _help(self) -> str:
        if self.stage != "card":
            return HELP[self.stage] + ("" if self.stage == "reason" else "  [b]esc[/] back")
        keys = {
            "y": "yes",
            "n": "no",
            "a": "always",
            "e": "edit in $EDITOR",
            "h": "pick hunks",
            "m": "mode",
            "s": "unified" if self.split else "side by side",
        }
        shown = [f"[b]{k}[/] {text}" for k, text in keys.items() if self._offers(k)]
        return "  ".join([*shown, "[b]esc[/] deny"])

    def _offers(self, key: str) -> bool:
        """Whether a card key applies to this request: edit keys only for an edit, and so on."""
        if key == "e":
            return self.request.kind == "edit" and self.request.proposed is not None
        if key == "h":
            return bool(self.hunks)
        if key == "s":
            return bool(self.hunks) and self.wide
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Each stage answers only its own keys; the rest reach the focused widget."""
        if action not in OWN_ACTIONS:
            return True
        if self.stage == "card" and action in CARD_KEYS and not self._offers(CARD_KEYS[action]):
            return False
        return action in STAGE_ACTIONS[self.stage]

    def _finish(self, decision: Decision) -> None:
        """Dismiss once: a key and the done-poll may both try to close the card."""
        if not self._finished:
            self._finished = True
            self.dismiss(decision)

    def _check_done(self) -> None:
        if self.request.done and not self._finished and self.is_current:
            # Already answered, so `request.resolve` ignores this; it only closes the card.
            self._finish(Decision("no"))

    def _too_soon(self) -> bool:
        """A key come just as the card opened was typed for the prompt, not read on the
        card: it must not answer it (a `y` in a message would approve the call)."""
        return self._shown_at is None or self.clock() < self._shown_at + KEY_GUARD_SECONDS

    def action_yes(self) -> None:
        if not self._too_soon():
            self._finish(Decision("yes"))

    def action_no(self) -> None:
        if not self._too_soon():
            self.stage = "reason"

    @on(Input.Submitted, "#reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        self._finish(Decision("no", event.value.strip()))

    def action_back(self) -> None:
        if self.stage in ("card", "reason"):
            self._finish(Decision("no"))
        else:
            self.stage = "card"

    def action_always(self) -> None:
        if self._too_soon():
            return
        if self.stage == "hunks":
            self.action_accept()
        else:
            self.stage = "always"

    def action_scope(self, key: str) -> None:
        if self._too_soon():
            return
        self._allow_always(SCOPES[key])

    @on(OptionList.OptionSelected, "#scope")
    def _scope_picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._allow_always(next(s for s in SCOPES.values() if s == event.option.id))

    @on(Input.Submitted, ".rule")
    def _rule_given(self, event: Input.Submitted) -> None:
        event.stop()
        highlighted = self.query_one("#scope", OptionList).highlighted
        self._allow_always(list(SCOPES.values())[highlighted or 0])

    def _allow_always(self, scope: Scope) -> None:
        fields = self.query(".rule").results(Input)
        typed = "\n".join(value for field in fields if (value := field.value.strip()))
        rule = typed or self.request.suggested_rule
        # No rule to keep (a line no rule can allow): the call is allowed once.
        self._finish(Decision("always", rule=rule, scope=scope) if rule else Decision("yes"))

    def action_edit(self) -> None:
        if self.stage == "always":
            self._allow_always("everywhere")
            return
        proposed = self.request.proposed
        if proposed is None:
            self.notify("This edit has no proposed file to open.")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        suffix = Path(self.request.item.file or "file.txt").suffix
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"proposed{suffix}"
            path.write_text(proposed, encoding="utf-8")
            try:
                problem = self._run_editor([*shlex.split(editor), str(path)])
            except ValueError as e:  # unbalanced quotes, found before the app is suspended
                problem = f"cannot be read ({e})"
            if problem:
                self.notify(f"The editor {editor!r} {problem}; nothing was accepted.")
                return
            self._finish(Decision("yes", edited=path.read_text(encoding="utf-8")))

    def _run_editor(self, command: list[str]) -> str | None:
        """Hand the terminal to the editor; a headless driver has no terminal to hand over."""
        try:
            with self.app.suspend():
                return run_editor(command)
        except SuspendNotSupported:
            return run_editor(command, stdin=subprocess.DEVNULL)

    def action_hunks(self) -> None:
        self.stage = "hunks"

    def action_accept(self) -> None:
        if self._too_soon():
            return
        chosen = tuple(c.index for c in self.query(HunkChoice) if c.chosen)
        if not chosen:
            self._finish(Decision("no", NO_HUNKS))
        elif len(chosen) == len(self.hunks):
            # All of them is a plain yes: the model need not read "only some hunks".
            self._finish(Decision("yes"))
        else:
            self._finish(Decision("yes", hunks=chosen))

    def action_split(self) -> None:
        self.split = not self.split

    def action_mode(self) -> None:
        self.stage = "mode"

    @on(OptionList.OptionSelected, "#mode")
    def _mode_picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        mode = str(event.option.id)
        self.set_mode(mode)
        if mode == "full":
            self._finish(Decision("yes"))
        elif reads_only(mode):
            self._finish(Decision("no", switched_to(mode)))
        else:
            self.notify(f"Mode: {mode}. This call still needs your answer.")
            self.stage = "card"
