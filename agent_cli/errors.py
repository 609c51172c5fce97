"""The one root of user-facing errors.

Every error a person can cause or meet is an `AgentError` whose message is one
sentence in the style "what happened — what to do". Front ends print the
message (never a traceback, unless `--debug`) and exit with `exit_code`.

    AgentError                      exit 1
    ├── UsageError                  exit 2   a bad flag or argument
    ├── ConfigError                 exit 2   a bad config file, no provider configured
    ├── ProviderError               exit 1   the model service failed
    │   ├── ProviderHTTPError                the service answered with an error status
    │   ├── ProviderConnectionError          it could not be reached, or it timed out
    │   ├── ProviderProtocolError            it answered something that is not the API
    │   ├── ContextTooLong                   the request does not fit the model's context
    │   └── StreamInterrupted                it failed after the answer had started
    ├── StoreError                  exit 1   a conversation could not be read or written
    │   └── NoSuchConversation      exit 2   no conversation has the id given
    └── ToolError                   exit 1   a tool could not do what it was asked
"""

from __future__ import annotations


class AgentError(Exception):
    """A user-facing error: its message says what happened and what to do."""

    exit_code = 1


class UsageError(AgentError):
    exit_code = 2


class ConfigError(AgentError):
    exit_code = 2


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


class StoreError(AgentError):
    pass


class NoSuchConversation(StoreError):
    """An id (or prefix) that names no conversation, or more than one: a usage error."""

    exit_code = 2


class ToolError(AgentError):
    pass
