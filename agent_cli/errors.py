"""The one root of user-facing errors.

Every error a person can cause or meet is an `AgentError` whose message is one
sentence in the style "what happened — what to do". Front ends print the
message (never a traceback, unless `--debug`) and exit with `exit_code`.

    AgentError                      exit 1
    ├── UsageError                  exit 2   a bad flag or argument
    │   ├── UnknownSkill                     no skill has the name given
    │   ├── ImageError                       a file that is not an image taken, or over the limit
    │   └── ClipboardError                   no clipboard tool, or no image on the clipboard
    ├── ConfigError                 exit 2   a bad config file, no provider configured
    │   └── ThemeFileError                   a theme file that is skipped
    ├── ProviderError               exit 1   the model service failed
    │   ├── ProviderHTTPError                the service answered with an error status
    │   │   └── ContextTooLong               the request does not fit the model's context
    │   ├── ProviderConnectionError          it could not be reached, or it timed out
    │   ├── ProviderProtocolError            it answered something that is not the API
    │   ├── StreamInterrupted                it failed after the answer had started
    │   └── ProviderUnavailable              it failed too often in a row: not asked for a while
    ├── ContextFull                 exit 1   nothing is left to shorten, and it still does not fit
    ├── StoreError                  exit 1   a conversation could not be read or written
    │   └── NoSuchConversation      exit 2   no conversation has the id given
    ├── CheckpointError             exit 1   git could not record or restore a checkpoint
    ├── NothingToUndo               exit 1   the conversation has no checkpoint left
    ├── ToolError                   exit 1   a tool could not do what it was asked
    └── McpLoginError               exit 1   an MCP server needs a login, or its login failed

A test reads this tree: every public error class of the package is in it, defined
here, with the parent drawn.
"""

from __future__ import annotations


class AgentError(Exception):
    """A user-facing error: its message says what happened and what to do."""

    exit_code = 1


class UsageError(AgentError):
    exit_code = 2


class UnknownSkill(UsageError):
    """No skill is named so (`agent skills list` shows them)."""


class ImageError(UsageError):
    """Not a PNG, JPEG, GIF or WebP image, a damaged one, or one over the size limit."""


class ClipboardError(UsageError):
    """The clipboard could not give an image: no tool to read it with, or none on it."""


class ConfigError(AgentError):
    exit_code = 2


class ThemeFileError(ConfigError):
    """A theme file that cannot be used: it is skipped, with a warning that says why."""


class ProviderError(AgentError):
    """The model service failed; `retryable` says whether the retry policy may try again."""

    retryable = False


class ProviderHTTPError(ProviderError):
    def __init__(self, message: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.retryable = status == 429 or status == 529 or status >= 500


class ProviderConnectionError(ProviderError):
    retryable = True


class ProviderProtocolError(ProviderError):
    """The service answered, but not in the API's format (an HTML page, bad JSON)."""


class ContextTooLong(ProviderHTTPError):
    """The service refused the request because it does not fit the model's context window."""


class StreamInterrupted(ProviderError):
    """The stream broke after it had produced output; such a stream is never retried."""


class ProviderUnavailable(ProviderError):
    """The service failed request after request (each after its retries): its breaker is
    open, so a message fails at once until the cooldown has passed (providers/breaker.py)."""


class ContextFull(AgentError):
    """Nothing is left to shorten and the conversation still does not fit."""


class StoreError(AgentError):
    pass


class NoSuchConversation(StoreError):
    """An id (or prefix) that names no conversation, or more than one: a usage error."""

    exit_code = 2


class CheckpointError(AgentError):
    """git could not record or restore a checkpoint (or could not be started at all)."""


class NothingToUndo(AgentError):
    """The conversation has no checkpoint left to go back to."""


class ToolError(AgentError):
    pass


class McpLoginError(AgentError):
    pass
