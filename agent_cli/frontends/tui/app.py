"""The TUI (SPEC §12): one screen around a Session, which it only drives and renders.

The app subscribes an `EventFeed` to the session; the feed takes notes and
asks for a flush, and `_show_news` applies what happened at most every
`FLUSH_SECONDS` (~28 frames a second), in one batched update. Everything a
slash command does lives in `Interactive`; the app only carries out the
reply's action (quit, clear, a new session, a theme).

While a run goes the input stays live: Enter steers (the run reads the message
at its next round), Tab queues (a run of its own after this one); what waits is
shown above the input, Up takes the last one back to edit, Escape drops it, and
what a stop gives back unsent returns to the input.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.theme import Theme
from textual.timer import Timer
from textual.widget import AwaitMount, Widget

from agent_cli.errors import AgentError
from agent_cli.frontends.tui import themes
from agent_cli.frontends.tui.approval_queue import ApprovalQueue
from agent_cli.frontends.tui.composer import Composer
from agent_cli.frontends.tui.history import History, history_file
from agent_cli.frontends.tui.pending_view import PendingView
from agent_cli.frontends.tui.plan_view import PlanView
from agent_cli.frontends.tui.prompt_input import PromptInput
from agent_cli.frontends.tui.search_bar import SearchBar
from agent_cli.frontends.tui.status_line import StatusLine
from agent_cli.frontends.tui.styles import beside, read_styles
from agent_cli.frontends.tui.transcript import Transcript
from agent_cli.settings import Settings

# What only a session's work needs (its items, forms, plans, slash commands' replies) is
# imported where it is used: a new conversation's first frame comes before the session.
if TYPE_CHECKING:
    from agent_cli.engine.elicitation import ElicitationRequest
    from agent_cli.engine.items import AssistantItem
    from agent_cli.engine.pending import PendingMessage
    from agent_cli.engine.session import Session
    from agent_cli.frontends.interactive import Interactive
    from agent_cli.frontends.slash import Command, Reply
    from agent_cli.frontends.tui.feed import Batch, EventFeed
    from agent_cli.frontends.tui.form_card import FormCard
    from agent_cli.frontends.tui.markdown_render import Palette
    from agent_cli.media import Prompt
    from agent_cli.tools.mcp_forms import ElicitAnswer
    from agent_cli.tools.plan import Plan

# The most often streamed text reaches the screen: a little under 30 a second, so that
# with the input's blinking cursor and a run's few frames of its own (its views mounted,
# the scrollbar appearing) the screen still paints at most 30 frames a second (SPEC §12).
FLUSH_SECONDS = 1 / 28
FLOOD_FLUSH_SECONDS = 1 / 16  # the same, while text floods in (see FLOOD_CHARS)
FLOOD_CHARS = 800  # characters in one flush: 24,000 a second, far past any model's pace
QUIT_SECONDS = 2.0  # a second Ctrl+C within this quits
DOUBLE_ESCAPE_SECONDS = 0.8  # a second Escape in an empty input within this opens /rewind
TYPED_SECONDS = 0.1  # a key this recent is shown before the stream's next news
SEVERITY = {"info": "information", "warn": "warning", "error": "error"}
STYLES = (  # one beside each widget's module; the views' come with them (VIEW_STYLES)
    "app.tcss",
    "composer.tcss",
    "prompt_input.tcss",
    "status_line.tcss",
    "welcome.tcss",
)
PLACED_STYLES: dict[type[Widget], str] = {  # read when each is first placed (`_place`)
    SearchBar: "search_bar.tcss",
    PlanView: "plan_view.tcss",
    PendingView: "pending_view.tcss",
}


class AgentApp(App[int]):
    """The conversation, the input and the status line; exits with 0 on a normal quit."""

    CSS_PATH: ClassVar = list(STYLES)
    ENABLE_COMMAND_PALETTE = False
    # Focus the input first: moving focus there later restyles the whole transcript.
    AUTO_FOCUS = "#prompt"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "stop / quit", priority=True, show=False),
        Binding("ctrl+f", "search", "search", priority=True, show=False),
        Binding("ctrl+g", "edit_input", "edit in $EDITOR", priority=True, show=False),
    ]
    _frozen: ClassVar[bool] = False  # gc.freeze() is done once per process
    feed: EventFeed  # the session's events, from when it is subscribed (`_subscribe`)

    def __init__(
        self,
        interactive: Interactive | None,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,  # the run's elapsed time (tests set it)
        opening: Callable[[], Awaitable[Interactive]] | None = None,
    ) -> None:
        """`interactive`, or (None) `opening` to build it after the first frame: the screen
        (input, status line, welcome) is painted first, the session is built in a worker,
        and what is sent meanwhile waits for it."""
        super().__init__()
        if interactive is None and opening is None:
            raise ValueError("AgentApp needs an Interactive or a way to open one")
        self._interactive = interactive
        self._opening = opening
        self.opening_error: AgentError | None = None  # opening failed: said once the app ends
        self._early: list[Composer.Send] = []  # sent before the session was ready
        self.settings = settings
        workspace = interactive.workspace if interactive is not None else settings.workspace
        self.workspace = workspace
        self.transcript = Transcript(self._streamed_text, id="transcript")
        self.composer = Composer(
            workspace,
            lambda: History(history_file(workspace)),
            recall=self._recall_pending,
            drop=self._empty_escape,
            commands=self._command_list,
            resources=interactive.resources if interactive is not None else None,
        )
        self.search_bar = SearchBar()
        self.plan_view = PlanView(id="plan")
        self.pending_view = PendingView(id="pending")
        self.clock = clock  # the status line's and the running cards' timers read it
        self.status = StatusLine(reduce_motion=settings.reduce_motion, clock=clock)
        if settings.reduce_motion:  # Textual's own: no smooth scrolling or sliding widgets
            self.animation_level = "none"
        self.approvals = ApprovalQueue(self, self._set_mode, self._waiting_changed)
        self._forms: list[FormCard] = []  # the MCP servers' form cards open
        self._themes_read: set[str] | None = None  # the themes read before the first frame
        self.theme_problems = self._load_themes()
        self._unsubscribe: Callable[[], None] = lambda: None
        if interactive is not None:
            self._unsubscribe = self._subscribe(interactive.session)
        self._flush_timer: Timer | None = None
        self._holds: set[asyncio.Task[None]] = set()  # flushes' frames waiting for mounts
        self._last_flush = 0.0
        self._flooding = False
        self._typed_first = False  # the news waits for a key's frame (at most one frame)
        self._interrupted = 0.0
        self.welcome: Widget | None = None  # the first start's welcome, while it shows
        self._escaped = 0.0
        self._query = ""
        self._matches: list[int] = []
        self._match = 0
        if interactive is not None:
            interactive.on_switch.append(self._switched)

    @property
    def ready(self) -> bool:
        """Whether the session is built (at once, or after the first frame: `opening`)."""
        return self._interactive is not None

    @property
    def interactive(self) -> Interactive:
        if self._interactive is None:
            raise RuntimeError("the session is not open yet (AgentApp.ready)")
        return self._interactive

    @property
    def session(self) -> Session:
        return self.interactive.session

    def _command_list(self) -> list[Command]:
        from agent_cli.frontends.slash import COMMANDS

        return self.interactive.command_list() if self.ready else list(COMMANDS)

    def compose(self) -> ComposeResult:
        # Between the transcript and the composer, the search bar, the plan and the waiting
        # messages are mounted when they first show (`_place`): hidden, they only cost the
        # first frame their mount and their styles' parse (~5 ms).
        yield self.transcript
        yield self.composer
        yield self.status

    def _place(self, widget: SearchBar | PlanView | PendingView) -> AwaitMount | None:
        """Mount `widget` where compose would have: in that order above the composer."""
        if widget.is_attached:
            return None
        order: list[Widget] = [self.search_bar, self.plan_view, self.pending_view]
        below = [w for w in order[order.index(widget) + 1 :] if w.is_attached]
        read_styles(self, beside(__file__, PLACED_STYLES[type(widget)]))
        # Before a widget: into its parent, the main screen, even under a card's screen.
        return self.mount(widget, before=below[0] if below else self.composer)

    def show_plan(self, plan: Plan | None) -> None:
        if plan is not None:
            self._place(self.plan_view)
        self.plan_view.plan = plan

    def show_pending(self, messages: tuple[PendingMessage, ...]) -> None:
        if messages:
            self._place(self.pending_view)
        self.pending_view.messages = messages

    async def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.ready:
            await self._show_opened()
        else:  # what the first frame shows before the session is built (on_ready)
            self._show_opening()
        for problem in self.theme_problems:
            self.transcript.add_reply(problem, "warn")
        self.composer.focus_input()
        if not AgentApp._frozen:
            # What is alive now (Textual, Rich, the conversation) lives as long as the
            # process: keep it out of the collector's full passes, which pause frames.
            gc.freeze()
            AgentApp._frozen = True
        gc.enable()  # the start ran without it (commands/opening.py): from here on it runs

    async def _show_opened(self) -> None:
        """The session's part of the screen: its status, plan and conversation."""
        self.interactive.questions.answer = self._ask
        self._show_status()
        self.show_plan(self.session.conversation.plan)
        await self.transcript.show(self.session.conversation.items)
        self._welcome()
        for warning in self.interactive.commands.take_warnings():
            self.transcript.add_reply(warning, "warn")
        if self.feed.dirty:  # events from before the app ran: their wake-up was refused
            self._wake()

    def _show_opening(self) -> None:
        """The status line and the welcome from the settings alone (a new conversation)."""
        from agent_cli.frontends.tui.welcome import Welcome

        status = self.status
        status.set_workspace(self.workspace)
        status.model = self.settings.model or "…"
        status.mode = self.settings.mode or "ask"
        self.welcome = Welcome(self.workspace, status.model, status.mode)
        self.transcript.mount(self.welcome)

    def on_ready(self) -> None:
        """The first frame is out: now what it did not need (their threads and round trips
        would only have delayed it); the status line fills in as they come."""
        self.load_other_themes()
        if self.ready:
            self._after_first_frame()
        else:
            self._open_session()

    def _after_first_frame(self) -> None:
        from agent_cli.frontends.tui.markdown_render import Palette  # Markdown: not before

        self._git_status()
        self._warm_up(Palette.from_app(self))
        self._connect()
        self._load_commands()

    @work(group="open")
    async def _open_session(self) -> None:
        """Build the session (after the first frame), then show it and send what waited."""
        assert self._opening is not None
        try:
            interactive = await self._opening()
        except AgentError as e:  # as it would have been said without the app: on its end
            self.opening_error = e
            self.exit(1)
            return
        self._interactive = interactive
        self.composer.resources = interactive.resources  # what `@server:` completes
        interactive.on_switch.append(self._switched)
        self._unsubscribe = self._subscribe(interactive.session)
        await self._show_opened()
        self._after_first_frame()
        early, self._early = self._early, []
        for event in early:
            self._send(event)

    @work(group="commands")
    async def _load_commands(self) -> None:
        """The MCP servers' prompts, for completion and /help; what went wrong is said."""
        try:
            await self.interactive.load_commands()
        except AgentError as e:
            self.transcript.add_reply(str(e), "warn")
        self.composer.relisted()  # `@server:` typed meanwhile completes now
        for warning in self.interactive.commands.take_warnings():
            self.transcript.add_reply(warning, "warn")

    @work(thread=True, group="warm-up")
    def _warm_up(self, palette: Palette) -> None:
        from agent_cli.frontends.tui.markdown_render import warm_up
        from agent_cli.frontends.tui.transcript import load_views

        warm_up(palette)
        load_views()  # or the first message would wait for them
        import agent_cli.frontends.tui.activity  # noqa: F401 (and for the run's first news)

    @work(group="connect")
    async def _connect(self) -> None:
        """The provider and model (a listing when none is configured), then a local
        server's own context window (a few round trips), into the status line."""
        route = self.interactive.route
        if route is None or self.session.conversation.agent != "builtin":
            return
        try:
            await route.connect()
        except AgentError as e:  # said here; the first message says it again if it lasts
            self.transcript.add_reply(str(e), "error")
            return
        self.status.model = self.session.conversation.model or route.label
        self.status.context = route.context_window() or 0
        await route.served_window()
        self.status.context = route.context_window() or 0

    # -- themes ----------------------------------------------------------------------

    def _load_themes(self) -> list[str]:
        """The user's themes (any may be the one chosen, and a broken one is said at once)
        and, of the bundled ones, those the app may start in; the others after the first
        frame (`load_other_themes`)."""
        candidates = themes.theme_candidates(self.settings.theme)
        loaded = themes.load_themes(bundled_wanted=candidates.__contains__)
        for theme in loaded.themes.values():
            self.register_theme(theme)
        self._themes_read = {*candidates, *loaded.themes}
        self._start_theme(themes.first_available(candidates, self.available_themes))
        return loaded.problems

    def load_other_themes(self) -> None:
        """The bundled themes not read before the first frame (once; `/theme` lists them)."""
        if self._themes_read is None:
            return
        read, self._themes_read = self._themes_read, None  # a user's own theme stays theirs
        loaded = themes.load_themes([themes.bundled_dir()], lambda name: name not in read)
        for theme in loaded.themes.values():
            self.register_theme(theme)
        for problem in loaded.problems:
            self.transcript.add_reply(problem, "warn")

    def _start_theme(self, name: str) -> None:
        """Start in `name` as `self.theme = name` would, without its watcher's refresh: that
        parses every stylesheet again once the app runs, and restyles every widget, before
        the first frame (~15 ms). Nothing is parsed yet, so the first parse can take this
        theme's variables; the rest is what the watcher (`App._watch_theme`) does."""
        self.set_reactive(AgentApp.theme, name)
        theme = self.current_theme
        self.update_classes(
            {f"-theme-{name}": True, "-dark-mode": theme.dark, "-light-mode": not theme.dark},
            update=False,
        )
        self._refresh_truecolor_filter(self.ansi_theme)
        self.stylesheet.set_variables(self.get_css_variables())

    def _theme_changed(self, _theme: Theme) -> None:
        self.transcript.theme_changed()

    def switch_theme(self, name: str) -> Reply:
        from agent_cli.frontends.slash import Reply

        self.load_other_themes()
        if not name:
            ours = [n for n in self.available_themes if n.startswith("agent-")]
            others = sorted(n for n in self.available_themes if n not in ours)
            listed = ", ".join(f"`{n}`" for n in [*sorted(ours), *others])
            return Reply(
                f"The theme is `{self.theme}`. Themes: {listed}. Switch with `/theme NAME`."
            )
        if name not in self.available_themes:
            return Reply(f"There is no theme `{name}` — `/theme` lists them.", "warn")
        self.theme = name
        themes.remember_theme(name, self.settings.theme)
        return Reply(f"Theme switched to `{name}`.")

    # -- the session's events --------------------------------------------------------

    def _subscribe(self, session: Session) -> Callable[[], None]:
        # Imported here: the events' types are not needed before there is a session (a new
        # conversation's first frame comes before it).
        from agent_cli.frontends.tui.feed import EventFeed

        self.feed = EventFeed(self._wake)
        return session.events.subscribe(self.feed)

    def close_feed(self) -> None:
        """Stop listening to the session (the app has ended; the session goes on closing)."""
        self._unsubscribe()
        self._unsubscribe = lambda: None
        if self.ready and self._switched in self.interactive.on_switch:
            self.interactive.on_switch.remove(self._switched)

    def _streamed_text(self, item: AssistantItem) -> tuple[str, str, bool]:
        return self.feed.streamed(item)

    def _wake(self, now: bool = False) -> None:
        """The feed has news: flush at the next frame slot (never more than ~28 a second),
        or at once (`now`: the run ended, its last text should not wait for a slot).

        When text floods in (a replay, a very fast local model), frames come a little
        less often: each one costs the same, and fewer leave more time to read the stream.
        """
        if not self.is_running:
            return
        if now and self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        if self._flush_timer is None:
            interval = FLOOD_FLUSH_SECONDS if self._flooding else FLUSH_SECONDS
            delay = max(0.001, self._last_flush + interval - time.monotonic())
            self._flush_timer = self.set_timer(
                0.001 if now else delay, self._show_news, name="flush"
            )

    def _show_news(self) -> None:
        # Not `_flush`: Textual's App._flush is what a captured print's flush() calls.
        self._flush_timer = None
        if not self._typed_first and self.composer.input.typed_within(TYPED_SECONDS):
            # A key was just pressed: its frame (the input alone, cheap) goes first; the
            # stream's news (a layout of the transcript, dear) in the frame after it.
            self._typed_first = True
            self.call_after_refresh(self._show_news)
            return
        self._typed_first = False
        self._last_flush = time.monotonic()
        feed = self.feed
        batch = feed.take()
        self._flooding = batch.chars >= FLOOD_CHARS
        self._begin_batch()
        mounting: AwaitMount | None = None
        try:
            mounting = self._apply(batch)
            self.status.paint_with_frame()  # the spinner turns in this frame, not its own
        finally:
            if mounting is None:
                self._end_batch()
            else:  # new views: the frame waits for them, so the flush is still one frame
                self._hold_frame(mounting)
        feed.commit(batch)

    def _hold_frame(self, mounting: AwaitMount) -> None:
        """End the flush's batch once its views are mounted (a task: the app's messages,
        keys among them, are not held up meanwhile)."""

        async def release() -> None:
            try:
                await mounting
            finally:
                self._end_batch()

        task = asyncio.create_task(release())
        self._holds.add(task)
        task.add_done_callback(self._holds.discard)

    def _apply(self, batch: Batch) -> AwaitMount | None:
        from agent_cli.frontends.tui.activity import doing

        status = self.status
        if batch.started:
            status.state = "running"
            status.run_started()
        if (now_doing := doing(batch)) is not None:
            status.activity = now_doing
        if batch.spent is not None:
            status.run_in += batch.spent.input_tokens
            status.run_out += batch.spent.output_tokens
        if batch.added and self.welcome is not None:  # gone with the first message
            self.welcome.remove()
            self.welcome = None
        mounting = self.transcript.added(batch.added) if batch.added else None
        # The views' modules and the items' types: loaded with the transcript's first view.
        from agent_cli.engine.items import AssistantItem, NoticeItem, ToolItem
        from agent_cli.frontends.tui.assistant_view import AssistantView
        from agent_cli.frontends.tui.notice_view import NoticeView
        from agent_cli.frontends.tui.tool_card import ToolCard

        for key, text in batch.text.items():
            view = self.transcript.view(key)
            if isinstance(view, AssistantView):
                view.grow(text, batch.reasoning.pop(key, ""))
        for key, reasoning in batch.reasoning.items():
            view = self.transcript.view(key)
            if isinstance(view, AssistantView):
                view.grow("", reasoning)
        for item in batch.updated.values():
            view = self.transcript.view(item.id)
            if isinstance(view, ToolCard) and isinstance(item, ToolItem):
                view.update_item(item)
            elif isinstance(view, NoticeView) and isinstance(item, NoticeItem):
                view.change(item.text, item.level)
            elif (
                isinstance(view, AssistantView)
                and isinstance(item, AssistantItem)
                and not item.streaming
            ):
                view.complete(item)
        for text, level in batch.notices:
            self.notify(text, severity=SEVERITY.get(level, "information"))  # type: ignore[arg-type]
        if batch.usage is not None:
            self.status.tokens = batch.usage.input_tokens + batch.usage.output_tokens
            self.status.cost = self._cost()
        if batch.round_usage is not None:
            used = batch.round_usage
            self.status.in_context = used.input_tokens + used.output_tokens
        if batch.plan is not None:
            self.show_plan(batch.plan)
        if batch.pending is not None:
            self.show_pending(batch.pending)
        if batch.returned:
            self.composer.put_back(batch.returned)
        for request in batch.approvals:
            self.approvals.add(request)
        for form in batch.forms:
            self._ask_form(form)
        if batch.finished is not None and mounting is not None:
            # The run's last views are mounted first: "idle" in the frame they appear in.
            self.call_later(self._run_finished_when_shown, mounting, batch.finished)
        elif batch.finished is not None:
            self._run_finished(batch.finished)
        return mounting

    async def _run_finished_when_shown(self, mounting: AwaitMount, reason: str) -> None:
        await mounting
        self._run_finished(reason)

    def _ask_form(self, request: ElicitationRequest) -> None:
        """An MCP server's form, as a card over the transcript; its answer goes to the server."""
        from agent_cli.frontends.tui.form_card import FormCard
        from agent_cli.tools.mcp_forms import CANCEL

        if request.done:
            return
        card = FormCard(request.form)
        self._forms.append(card)

        def answered(answer: ElicitAnswer | None) -> None:
            self._forms.remove(card)
            request.resolve(answer or CANCEL)

        self.push_screen(card, callback=answered)
        self._attention(f"The MCP server {request.form.server!r} asks for information.")

    def _run_finished(self, reason: str) -> None:
        from agent_cli.frontends.plan_text import card_due
        from agent_cli.tools.mcp_forms import CANCEL

        for card in list(self._forms):  # the run stopped: its calls' forms are moot
            card.dismiss(CANCEL)
        self.status.state = "idle"
        self.status.mode = self.session.mode
        self._git_status()
        said = {"answered": "The answer is ready.", "stopped": "The run was stopped."}
        self._attention(said.get(reason, f"The run ended ({reason.replace('_', ' ')})."))
        if card_due(self.session, reason):
            self._offer_plan()

    def _offer_plan(self) -> None:
        """Plan mode ended with a plan: the card, whose answer may start the run that
        carries it out."""
        from agent_cli.frontends.plan_text import PlanAnswer, implement
        from agent_cli.frontends.tui.plan_card import PlanCard

        plan = self.session.conversation.plan
        if plan is None:
            return

        def answered(answer: PlanAnswer | None) -> None:
            if answer is None or answer.choice != "implement":
                self.transcript.add_reply("Still in plan mode: say what to change.", "info")
                return
            message = implement(self.session, answer)
            self.status.mode = self.session.mode
            self._run(message)

        self.push_screen(PlanCard(plan), callback=answered)

    def _attention(self, message: str) -> None:
        """A bell and a toast when the person is elsewhere and wants to know (settings.notify)."""
        if self.settings.notify and not self.app_focus:
            self.bell()
            self.notify(message, title="agent")

    def _waiting_changed(self, waiting: bool) -> None:
        if waiting:
            self.status.state = "waiting"
            self._attention("A call needs your approval.")
        elif self.session.running:
            self.status.state = "running"
        self.status.mode = self.session.mode

    def _set_mode(self, mode: str) -> None:
        self.session.set_mode(mode)
        self.status.mode = mode

    # -- the status line ---------------------------------------------------------------

    async def _ask(self, question: str) -> bool:
        """A yes/no the agent needs (may a workspace's own servers run?), as a modal."""
        from agent_cli.frontends.tui.question import Question

        answered: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()
        self.push_screen(Question(question), callback=answered.set_result)
        self.bell()
        return bool(await answered)

    def _cost(self) -> float:
        """The conversation's cost so far; -1 when its model has no price configured."""
        conversation = self.session.conversation
        price = self.interactive.prices(conversation.model)
        if price is None:
            return -1.0
        return price.cost(conversation.usage.input_tokens, conversation.usage.output_tokens)

    def _show_status(self) -> None:
        conversation = self.session.conversation
        status = self.status
        status.set_workspace(self.interactive.workspace)
        route = self.interactive.route
        # Before the route connects (just after the first frame) the model may be unknown.
        status.model = conversation.model or (route.label if route is not None else "") or "…"
        status.mode = self.session.mode
        status.tokens = conversation.usage.input_tokens + conversation.usage.output_tokens
        status.in_context = 0  # known after the next round
        builtin = conversation.agent == "builtin"
        status.context = (route.context_window() or 0) if route is not None and builtin else 0
        status.cost = self._cost()
        status.state = "running" if self.session.running else "idle"

    @work(thread=True, exclusive=True, group="git")
    def _git_status(self) -> None:
        """The branch and dirty state, from git in a thread (it may take a while)."""
        bench = self.interactive.bench
        found = bench.branch() if bench is not None else None
        branch = "" if found is None else found[0] + ("*" if found[1] else "")
        self.call_from_thread(setattr, self.status, "branch", branch)
        self.call_from_thread(setattr, self.status, "unconfined", self.interactive.unconfined())

    # -- sending -----------------------------------------------------------------------

    @on(Composer.Send)
    def _send(self, event: Composer.Send) -> None:
        if not self.ready:  # the session is still being built: it goes once it is
            self._early.append(event)
            self.composer.sent(event.text)
            return
        text = event.text
        if event.images and (self.session.running or text.startswith("/")):
            # Steered and queued messages are text; images go with a message of their own.
            self.transcript.add_reply(
                "Images go with a new message: send it once the run has ended (or stop "
                "it first), without a slash command.",
                "warn",
            )
            return
        if event.images:
            from agent_cli.media import Prompt  # loaded with the images

            self.composer.sent(text)
            self._run(Prompt(text, event.images))
        elif text.startswith("/"):
            self.composer.sent(text)
            self._command(text)
        elif text.startswith("!"):
            self._own(text)
        elif self.session.running:
            try:
                if event.queue:
                    self.session.queue(text)
                else:
                    self.session.steer(text)
            except AgentError as e:
                self.transcript.add_reply(str(e), "warn")
                return
            self.composer.sent(text)
            self.show_pending(self.session.pending.messages)  # now, not next frame
        else:
            self.composer.sent(text)
            self._run(text)

    def _recall_pending(self) -> str | None:
        """Up in an empty input: the last waiting message leaves the list, to be edited."""
        if not self.ready:
            return None
        waiting = self.session.pending.messages
        if not waiting or self.session.pending.drop(waiting[-1].id) is None:
            return None
        self.show_pending(self.session.pending.messages)
        return waiting[-1].text

    def _drop_pending(self) -> bool:
        """Escape in an empty input: the last waiting message is dropped."""
        if not self.ready:
            return False
        waiting = self.session.pending.messages
        if not waiting or self.session.pending.drop(waiting[-1].id) is None:
            return False
        self.show_pending(self.session.pending.messages)
        return True

    @work(group="run")
    async def _run(self, text: str | Prompt) -> None:
        self.transcript.anchor()
        try:
            await self.session.send(self.interactive.own.message(text))
        except AgentError as e:
            self.transcript.add_reply(str(e), "error")

    @work(group="own")
    async def _own(self, line: str) -> None:
        """`!command`: its output shown as it comes in the transcript; Ctrl+C stops it."""
        from agent_cli.frontends.own_command import OwnCommand
        from agent_cli.frontends.tui.own_command_view import OwnCommandView

        view = OwnCommandView(line.removeprefix("!").strip())
        commands = self.interactive.own
        own = commands.start(line, self.interactive.workspace, view.append, self.session.running)
        if not isinstance(own, OwnCommand):
            self.transcript.add_reply(own, "warn")
            return  # left in the input, to send once it can run
        self.composer.sent(line)
        self.transcript.add_view(view)
        said, failed = await commands.run(own)
        ran = own.exit_code is not None or own.stopped
        view.finish(
            f"{own.outcome} · the model reads this with your next message" if ran else said, failed
        )
        self.composer.focus_input()

    @work(group="command")
    async def _command(self, line: str) -> None:
        reply = await self.interactive.handle(line)
        self._show_status()  # /model, /agent and /mode change what it shows
        self._git_status()  # /undo changes the files: the dirty marker, at once
        action = reply.action
        if action == "quit":
            self.exit(0)
            return
        if action == "clear":
            await self.transcript.clear_view()
        elif action in ("new", "switched"):
            await self._show_session()
        elif action == "theme" and not reply.argument:
            action = "pick_theme"
            reply = self.switch_theme("")
        elif action == "theme":
            reply = self.switch_theme(reply.argument)
        elif action == "copy":
            self.copy_to_clipboard(reply.argument)
        elif action == "rewound":
            await self._rewound(reply)
            return
        if action.startswith("pick_") and await self._open_picker(action):
            return  # the picker shows the choices instead of the reply
        if reply.text:
            self.transcript.add_reply(reply.text, reply.level)
        if action == "send":
            self._send_message(reply.message())

    def _send_message(self, message: str | Prompt) -> None:
        """A prompt command's message: steered into the run going on (words only: its
        images need a message of their own), or a run of its own."""
        if not self.session.running:
            self._run(message)
            return
        try:
            self.session.steer(message)
        except AgentError as e:
            self.transcript.add_reply(str(e), "warn")
        self.show_pending(self.session.pending.messages)

    def _switched(self, session: Session) -> None:
        """/new or /sessions replaced the session: listen to the new one."""
        self._unsubscribe()
        self._unsubscribe = self._subscribe(session)

    def _welcome(self) -> None:
        """An empty conversation opens with the welcome where the transcript will be."""
        from agent_cli.frontends.tui.welcome import Welcome

        conversation = self.session.conversation
        if (
            isinstance(self.welcome, Welcome)
            and not conversation.items
            and self.welcome.is_attached
        ):
            self.welcome.show(self.status.model, self.session.mode)  # painted before it opened
            return
        if self.welcome is not None:
            self.welcome.remove()
            self.welcome = None
        if not conversation.items:
            workspace, model = self.interactive.workspace, self.status.model
            self.welcome = Welcome(workspace, model, self.session.mode)
            self.transcript.mount(self.welcome)

    async def _show_session(self) -> None:
        self._query, self._matches = "", []
        self._show_status()
        self.show_plan(self.session.conversation.plan)
        self.show_pending(self.session.pending.messages)
        await self.transcript.show(self.session.conversation.items)
        self._welcome()

    async def _open_picker(self, action: str) -> bool:
        """The picker a reply asked for (pickers.py); False when there is nothing to pick."""
        from agent_cli.frontends.tui import pickers

        if action == "pick_theme":
            self.load_other_themes()
        made = await pickers.build(action, self.interactive, self)
        if made is None:
            return False
        picker, command = made

        def chosen(choice: str | None) -> None:
            if choice:
                self._command(f"{command} {choice}")

        self.push_screen(picker, callback=chosen)
        return True

    async def _rewound(self, reply: Reply) -> None:
        """After a rewind: the shorter conversation, the message back in the input, and
        the offer to restore the files to before the changes it took out."""
        await self._show_session()
        self.transcript.add_reply(reply.text, reply.level)
        self.composer.input.set_text(reply.argument)
        self.composer.focus_input()
        offer = self.interactive.rewind_offer
        if offer is None:
            return
        if await self._ask(f"Restore the files to before '{offer.label}', the first change since?"):
            restored = await self.interactive.restore_files()
            self.transcript.add_reply(restored.text, restored.level)
        else:
            self.interactive.rewind_offer = None
            self.transcript.add_reply("The files are left as they are.", "info")
        self.composer.focus_input()

    def _empty_escape(self) -> None:
        """Escape in an empty input: drop the last waiting message; with none waiting and
        no run going, a second Escape soon after opens the messages to rewind to."""
        if self._drop_pending() or not self.ready:
            return
        if self.session.running:  # nothing waits to be dropped: Escape stops, as Ctrl+C does
            self._stop_run()
            return
        now = time.monotonic()
        if now - self._escaped <= DOUBLE_ESCAPE_SECONDS:
            self._escaped = 0.0
            self._command("/rewind")
            return
        self._escaped = now

    # -- keys --------------------------------------------------------------------------

    def _stop_run(self) -> None:
        self.session.stop()
        self.status.state = "stopping"

    def on_key(self, event: events.Key) -> None:
        """Typing always reaches the input: a printable key pressed with a card, the
        reasoning or the transcript focused goes to the input, and the input takes the
        focus back. Keys the focused widget binds (a card's Enter and `c`) stay its own: a
        card has the focus only when reached with Tab, as a click does not focus it.
        Escape stops a run there, and in an input with text in it (an empty input has its
        own Escape; a card open on its own screen keeps its Escape)."""
        prompt = self.composer.input
        if self.screen is not self.screen_stack[0] or event.key in self.screen.active_bindings:
            return
        if event.key == "escape":
            if self.ready and self.session.running and (self.focused is not prompt or prompt.text):
                event.stop()  # stop at once: what waits goes back to the input
                self._stop_run()
            return
        if self.focused is prompt or not event.is_printable or event.character is None:
            return
        event.stop()
        prompt.focus()
        prompt.insert(event.character)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on a card, the plan or a long message opens or folds it and does not
        take the focus (FOCUS_ON_CLICK): if a card reached with Tab has it, the input
        takes it back, so the keys typed next are not that card's."""
        if self.screen is not self.screen_stack[0] or self.focused is self.composer.input:
            return
        clicked = self.screen.get_focusable_widget_at(event.screen_x, event.screen_y)
        if clicked is not None and not clicked.focus_on_click():
            self.composer.focus_input()

    @on(PromptInput.Scroll)
    def _scroll(self, event: PromptInput.Scroll) -> None:
        """PageUp/PageDown (Home/End) in the input scroll the transcript."""
        event.stop()
        transcript = self.transcript
        {
            "page_up": transcript.scroll_page_up,
            "page_down": transcript.scroll_page_down,
            "home": transcript.scroll_home,
            "end": transcript.scroll_end,
        }[event.where]()

    def action_interrupt(self) -> None:
        """Ctrl+C: copy what is selected; else stop the run; when idle, clear the input,
        then quit on a second press."""
        prompt = self.composer.input
        if self.focused is prompt and prompt.selected_text:
            self.copy_to_clipboard(prompt.selected_text)
            return
        selected = self.screen.get_selected_text()
        if selected:  # text selected with the mouse in the transcript
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify("Copied the selected text.")
            return
        if self.ready and self.interactive.own.running is not None:
            self.interactive.own.running.stop()
            return
        if self.ready and self.session.running:
            self._stop_run()
            return
        if prompt.text:
            prompt.set_text("")
            return
        now = time.monotonic()
        if now - self._interrupted <= QUIT_SECONDS:
            self.exit(0)
            return
        self._interrupted = now
        self.status.hint = "Ctrl+C again to quit"
        self.set_timer(QUIT_SECONDS, lambda: setattr(self.status, "hint", ""))

    async def action_search(self) -> None:
        if (mounting := self._place(self.search_bar)) is not None:
            await mounting  # its Input, focused next, is mounted with it
        self.search_bar.open()

    def action_edit_input(self) -> None:
        """Ctrl+G: the input in $VISUAL/$EDITOR (a long prompt); the edit comes back to it."""
        from agent_cli.frontends.plan_text import edit_text
        from agent_cli.frontends.tui.terminal import run_in_terminal

        prompt = self.composer.input
        edited, problem = edit_text(
            prompt.text, lambda command: run_in_terminal(self, command), "input", True
        )
        if edited is None:
            self.notify(f"Not edited: {problem}.", severity="warning")
            return
        prompt.set_text(edited)
        self.composer.focus_input()

    @on(SearchBar.Find)
    async def _find(self, event: SearchBar.Find) -> None:
        from agent_cli.frontends.tui.search import find_all

        if not self.ready:
            return
        items = self.session.conversation.items
        if event.query != self._query:
            self._query = event.query
            self._matches = find_all(items, event.query)
            self._match = len(self._matches)
        if not self._matches:
            rewound = self.session.conversation.rewound  # kept, not shown: say they match
            found = sum(len(find_all(r.items, event.query)) for r in rewound)
            self.search_bar.show_count(0, 0, found)
            return
        self._match = (self._match + event.step) % len(self._matches)
        await self.transcript.reveal(self._matches[self._match])
        self.search_bar.show_count(self._match + 1, len(self._matches))

    @on(SearchBar.Closed)
    def _search_closed(self) -> None:
        self.transcript.clear_found()
        self.composer.focus_input()
