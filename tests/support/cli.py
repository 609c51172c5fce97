"""Run the real `agent` CLI as a person would: in this process (`agent`), or in its own
(`agent_process`) for what only a process shows.

`agent` calls `agent_cli.cli.run` — the very function the `agent` script exits with —
on the arguments, in the workspace as the current folder, with the given environment,
stdin as a pipe and stdout and stderr captured at the file descriptors (so what a
child process or a `dup2` writes is captured too, and nothing is a terminal). Everything
a process would start afresh is set up for the run and put back after it: the
environment, the folder, the standard streams and descriptors 0-2, `sys.argv`, signal
handlers, the root logger, prompt-toolkit's session, and every cache in `agent_cli`.

`agent_process` starts `python -m agent_cli`: for exit on a signal, a pipe closed early,
a terminal, two runs at once, start-up itself — and a few true end-to-end runs per command.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_cli import paths
from tests.support.fake_openai import FakeOpenAI

TIMEOUT = 60
MAIN = str(Path(__file__).resolve().parents[2] / "agent_cli" / "__main__.py")
# The handlers a run may set (asyncio's, prompt-toolkit's, the CLI's), restored after it.
SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGCHLD,
    signal.SIGPIPE,
    signal.SIGWINCH,
    signal.SIGTSTP,
    signal.SIGCONT,
    signal.SIGALRM,
)


class Hung(BaseException):
    """An in-process run went past TIMEOUT (a BaseException: the CLI catches Exception)."""


def agent(
    workspace: Path,
    *args: str,
    fake: FakeOpenAI | None = None,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """The CLI on `args` in this process, as `agent_process` runs it in a new one."""
    _no_running_loop()
    environment = _environment(fake, env)
    data = stdin.encode() if isinstance(stdin, str) else stdin or b""
    with _fresh_process(workspace, environment, data, list(args)) as output:
        code = _exit_status(_run(list(args)))
    return subprocess.CompletedProcess(["agent", *args], code, output.stdout, output.stderr)


def agent_process(
    workspace: Path,
    *args: str,
    fake: FakeOpenAI | None = None,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """The CLI on `args` as its own process, `python -m agent_cli`, to its end."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", *args],
        cwd=workspace,
        env=_environment(fake, env),
        input=data if data is not None else b"",
        capture_output=True,
        timeout=TIMEOUT,
    )


def _no_running_loop() -> None:
    """The CLI runs its own event loop, in the main thread (signal handlers need it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise AssertionError("agent() runs the CLI's own event loop: use agent_process in async code")


def _environment(fake: FakeOpenAI | None, env: dict[str, str] | None) -> dict[str, str]:
    environment = dict(os.environ)
    if fake is not None:
        environment["OPENAI_BASE_URL"] = fake.base_url
    environment.update(env or {})
    return environment


def _run(argv: list[str]) -> str | int | None:
    from agent_cli import cli

    def hung(signum: int, frame: types.FrameType | None) -> None:
        raise Hung(f"agent {' '.join(argv)} did not end within {TIMEOUT} s")

    signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        return cli.run(argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _exit_status(code: str | int | None) -> int:
    """What a process exits with for `sys.exit(code)`: a text is printed and exits 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


class _Output:
    """What a run wrote on stdout and stderr, once it has ended."""

    def __init__(self) -> None:
        self.stdout = b""
        self.stderr = b""


@contextlib.contextmanager
def _fresh_process(
    workspace: Path, environment: dict[str, str], data: bytes, argv: list[str]
) -> Iterator[_Output]:
    """This process, set up as a new `agent` process would start, and put back after."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_cleared_caches())
        stack.enter_context(_environment_and_folder(environment, workspace))
        stack.callback(setattr, sys, "argv", sys.argv)
        sys.argv = [MAIN, *argv]
        stack.enter_context(_signal_handlers())
        stack.enter_context(_root_logger())
        output = stack.enter_context(_standard_streams(data))
        stack.enter_context(_prompt_toolkit_session())
        yield output


@contextlib.contextmanager
def _environment_and_folder(environment: dict[str, str], workspace: Path) -> Iterator[None]:
    before, folder = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(environment)
    try:
        os.chdir(workspace)
        yield
    finally:
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _signal_handlers() -> Iterator[None]:
    handlers = {signum: signal.getsignal(signum) for signum in SIGNALS}
    wakeup = signal.set_wakeup_fd(-1)
    try:
        yield
    finally:
        signal.set_wakeup_fd(wakeup)
        for signum, handler in handlers.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def _root_logger() -> Iterator[None]:
    """The root logger as a process starts it: no handlers (pytest's are put back after)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)


@contextlib.contextmanager
def _standard_streams(data: bytes) -> Iterator[_Output]:
    """Descriptors 0-2 and sys.stdin/stdout/stderr: stdin a pipe fed `data`, stdout and
    stderr files, read once the run has ended."""
    output = _Output()
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    streams = sys.stdin, sys.stdout, sys.stderr
    for stream in streams:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    reader, writer = os.pipe()
    feeder = threading.Thread(target=_feed, args=(writer, data), daemon=True)
    feeder.start()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(reader, 0)
        os.close(reader)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdin = _text(0, "r", "strict")
        sys.stdout = _text(1, "w", "strict")
        sys.stderr = _text(2, "w", "backslashreplace")
        try:
            yield output
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = streams
            for fd, copy in zip((0, 1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            feeder.join(TIMEOUT)  # the pipe has no reader left: the feeder ends
            out.seek(0)
            err.seek(0)
            output.stdout, output.stderr = out.read(), err.read()


def _text(fd: int, mode: str, errors: str) -> io.TextIOWrapper:
    """A standard stream on `fd`, as Python makes one for a pipe (not a terminal)."""
    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding="utf-8", errors=errors, write_through=True)


def _feed(writer: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(writer, view) :]
    except OSError:
        pass  # the run ended without reading it all, as a process may
    finally:
        os.close(writer)


@contextlib.contextmanager
def _prompt_toolkit_session() -> Iterator[None]:
    """prompt-toolkit keeps the input and output it made first; a process makes its own."""
    from prompt_toolkit.application import create_app_session

    with create_app_session():
        yield


@contextlib.contextmanager
def _cleared_caches() -> Iterator[None]:
    """Every cache in `agent_cli` empty, as in a new process (some depend on PATH)."""
    _clear_caches()
    try:
        yield
    finally:
        _clear_caches()


def _clear_caches() -> None:
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "agent_cli" or module is None:
            continue
        for value in list(vars(module).values()):
            if (
                callable(getattr(value, "cache_clear", None))
                and getattr(value, "__module__", None) == name
            ):
                value.cache_clear()


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode()


def err(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode()


def saved() -> list[dict]:
    """Every stored conversation as saved (its JSON form), in id order."""
    from agent_cli.engine.store import SUFFIX, read_stored

    folder = paths.conversations_dir()
    return [read_stored(p) for p in sorted(folder.glob(f"*{SUFFIX}"))]


def spawn_plain(workspace: Path, base_url: str, size: tuple[int, int] = (40, 160)) -> Any:
    """`agent --plain` on a pseudo-terminal of `size` (rows, columns), talking to the fake
    model server at `base_url` (a pexpect child; the caller closes it)."""
    import pexpect

    env = dict(
        os.environ, OPENAI_BASE_URL=base_url, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1"
    )  # fmt: skip  (pexpect answers no cursor request)
    return pexpect.spawn(
        sys.executable, ["-m", "agent_cli", "--plain"], cwd=str(workspace), env=env,
        timeout=60, encoding="utf-8", dimensions=size,
    )  # fmt: skip
