"""OAuth 2.1 for MCP servers over HTTP, as the MCP spec's authorization section says.

The SDK's `OAuthClientProvider` does the protocol: discovery from a 401's
`WWW-Authenticate` (protected-resource metadata, then authorization-server
metadata, with the 2025-03-26 fallbacks), dynamic client registration or a
client ID metadata document, PKCE, the `resource` parameter, scope selection,
one step-up per request on a 403 `insufficient_scope`, and refresh. This module
gives it what is ours:

- `TokenStore`: the tokens and the client's registration, one file per server
  address under the user data folder (`mcp-auth/`), 0600 in a 0700 folder;
  never logged or shown. The tokens are kept with the `client_id` they were got
  for: an entry whose `client_id` was changed since is not logged in. A
  pre-registered `client_id` (the entry's `"oauth"`) stands in for a
  registration, its secret read from the variable it names and
  sent to the token endpoint as the entry's `token_endpoint_auth_method` says, or
  else as the authorization server's metadata does (`auth_method`).
- `Loopback`: the redirect listener on 127.0.0.1 that takes the one answer.
- `Present`: how the person is sent to the authorization page (the caller's:
  the CLI opens the browser, the TUI asks first, a run without a terminal
  refuses and says to run `agent mcp login NAME`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from agent_cli import paths
from agent_cli.errors import McpLoginError
from agent_cli.tools.mcp import ServerConfig

log = logging.getLogger(__name__)

FOLDER = "mcp-auth"
LOGIN_TIMEOUT = 300.0
"""Seconds a person has to finish a login in the browser."""
CALLBACK_PATH = "/callback"
CLIENT_NAME = "agent"
FILE_MODE = 0o600
FOLDER_MODE = 0o700

Present = Callable[[str, str], Awaitable[None]]
"""Send the person to an authorization page: (server name, URL). Raises `McpLoginError`
when there is nobody to send, or the person said no."""

_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>agent</title>"
    "<p>{text}</p><p>You can close this tab and go back to agent.</p>"
)


def store_file(url: str) -> Path:
    """Where a server's tokens are kept: named by a hash of its address (no address in a name)."""
    digest = hashlib.sha256(url.strip().encode("utf-8")).hexdigest()[:32]
    return paths.data_dir() / FOLDER / f"{digest}.json"


def stored_secrets() -> list[str]:
    """Every token and client secret kept, for the debug log's redactor."""
    found: list[Any] = []
    with contextlib.suppress(OSError):
        for file in (paths.data_dir() / FOLDER).glob("*.json"):
            data = _read(file)
            tokens, client = data.get("tokens") or {}, data.get("client") or {}
            found += [tokens.get("access_token"), tokens.get("refresh_token")]
            found.append(client.get("client_secret"))
    return [s for s in found if isinstance(s, str) and s]


def _read(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.debug("the token file %s could not be read: starting afresh", file)
        return {}
    return data if isinstance(data, dict) else {}


def _write(file: Path, data: Mapping[str, Any]) -> None:
    """Whole, 0600 from its first byte (a token is never readable by others, even briefly)."""
    file.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    os.chmod(file.parent, FOLDER_MODE)
    handle, temporary = tempfile.mkstemp(prefix=".tokens.", dir=file.parent)
    try:
        os.fchmod(handle, FILE_MODE)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def auth_method(supported: list[str] | None) -> str:
    """How a client secret goes to a token endpoint whose metadata says `supported`
    (RFC 8414's `token_endpoint_auth_methods_supported`; absent, it means basic)."""
    if supported and "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


class TokenStore:
    """The SDK's `TokenStorage` for one server: its tokens and its client registration.

    With a pre-registered client (`client_id` in the entry), that client is what
    `get_client_info` answers, and a registration is never stored.
    """

    def __init__(self, config: ServerConfig, env: Mapping[str, str], redirect: str) -> None:
        self.config = config
        self.file = store_file(config.url)
        self.env = env
        self.redirect = redirect

    # --- the SDK's TokenStorage

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self._tokens(_read(self.file))
        if tokens is None:
            return None
        try:
            return OAuthToken.model_validate(tokens)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        data = _read(self.file)
        data["server"] = self.config.url
        data["client_id"] = self._client_id(data)
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        _write(self.file, data)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        oauth = self.config.oauth
        if oauth is not None and oauth.client_id:
            secret = self.env.get(oauth.client_secret_env) if oauth.client_secret_env else None
            if oauth.client_secret_env and not secret:
                raise McpLoginError(
                    f"its client secret is read from ${oauth.client_secret_env}, which is not "
                    "set: set it and try again"
                )
            # The entry's method, or the one the server's metadata chose at an earlier token
            # request (kept, for a refresh before any metadata is read), or RFC 6749's
            # default for a client with a secret; a public client sends none.
            kept = _read(self.file).get("auth_method")
            method = oauth.token_endpoint_auth_method or (
                (kept if isinstance(kept, str) and kept else "client_secret_basic")
                if secret
                else "none"
            )
            return OAuthClientInformationFull(
                client_id=oauth.client_id,
                client_secret=secret,
                redirect_uris=[self.redirect],  # type: ignore[list-item]
                token_endpoint_auth_method=method,
            )
        client = _read(self.file).get("client")
        if not isinstance(client, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(client)
        except ValueError:
            return None

    async def set_client_info(self, client_info: Any) -> None:
        data = _read(self.file)
        data["server"] = self.config.url
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        _write(self.file, data)

    # --- ours

    def _client_id(self, data: Mapping[str, Any]) -> str:
        """The client tokens are got for now: the entry's, or the registration kept."""
        oauth = self.config.oauth
        if oauth is not None and oauth.client_id:
            return oauth.client_id
        client = data.get("client")
        found = client.get("client_id") if isinstance(client, dict) else None
        return found if isinstance(found, str) else ""

    def _tokens(self, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """The tokens kept, if they are the client's of now: those of another `client_id`
        (the entry's was changed since the login) are as none, and the next login replaces
        them. Tokens kept before the client was recorded are a registration's own (the one
        in the file), never a pre-registered client's."""
        tokens = data.get("tokens")
        if not isinstance(tokens, dict):
            return None
        oauth = self.config.oauth
        pre_registered = oauth is not None and bool(oauth.client_id)
        if "client_id" not in data and not pre_registered:
            return tokens
        return tokens if data.get("client_id") == self._client_id(data) else None

    def keep_auth_method(self, method: str) -> None:
        """The method the server's metadata chose for a pre-registered client's secret."""
        data = _read(self.file)
        if data.get("auth_method") != method:
            data["server"] = self.config.url
            data["auth_method"] = method
            _write(self.file, data)

    def expires_at(self) -> float | None:
        """When the stored access token ends (the SDK keeps that only in memory)."""
        value = _read(self.file).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def redirect_port(self) -> int:
        """The port of the registered redirect, so a stored registration is used as it was."""
        client = _read(self.file).get("client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        if isinstance(uris, list) and uris and isinstance(uris[0], str):
            parts = urlsplit(uris[0])
            if parts.hostname == "127.0.0.1" and parts.port:
                return parts.port
        return 0

    def has_tokens(self) -> bool:
        return self._tokens(_read(self.file)) is not None

    def forget_tokens(self) -> None:
        """Drop the tokens, keep the registration: the next request logs in anew."""
        data = _read(self.file)
        if data.pop("tokens", None) is not None:
            data.pop("expires_at", None)
            _write(self.file, data)

    def forget(self) -> bool:
        """Drop everything kept for the server (logout); False if nothing was."""
        try:
            self.file.unlink()
        except FileNotFoundError:
            return False
        return True


# ------------------------------------------------------------------ the redirect


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Loopback:
    """The redirect's listener: `http://127.0.0.1:PORT/callback`, for one answer.

    Started when the person is sent to the authorization page and closed when the
    answer (or the time limit) comes. Anything but the callback path is a 404, and a
    callback without the login's own `state` is refused while it goes on listening: a
    page or process that calls first cannot cut the person's login short.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self._answer: asyncio.Future[dict[str, str]] | None = None
        self._server: asyncio.Server | None = None
        self._state = ""

    @property
    def redirect(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self, state: str = "") -> None:
        """Listen for the answer; `state` is the authorization URL's (none: any answer)."""
        await self.close()
        self._state = state
        self._answer = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as e:
            raise McpLoginError(
                f"the login could not listen for its answer on 127.0.0.1:{self.port} ({e}): "
                'free that port, or set another "callback_port" in the entry\'s "oauth"'
            ) from e

    async def answer(self, timeout: float = LOGIN_TIMEOUT) -> dict[str, str]:
        """The callback's query parameters, once the browser has come back."""
        assert self._answer is not None, "start() first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), timeout)
        except TimeoutError:
            raise McpLoginError(
                f"no login came back within {timeout:g} s: try again, and finish the login in "
                "the browser"
            ) from None
        finally:
            await self.close()

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # the headers: nothing in them is needed
            method, target = [*line.split(" "), "", ""][:2]
            parts = urlsplit(target)
            if method != "GET" or parts.path != CALLBACK_PATH:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            given = query.get("state", "").encode()
            if self._state and not hmac.compare_digest(given, self._state.encode()):
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            said = "The login failed." if "error" in query else "You are logged in."
            page = _DONE_PAGE.format(text=said).encode()
            head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            writer.write(f"{head}Content-Length: {len(page)}\r\n\r\n".encode() + page)
            if self._answer is not None and not self._answer.done():
                self._answer.set_result(query)
        except (TimeoutError, ConnectionError, UnicodeError):
            log.debug("a broken request on the login's listener", exc_info=True)
        finally:
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()


# ------------------------------------------------------------------ the provider


def oauth(config: ServerConfig, env: Mapping[str, str], present: Present) -> Any:
    """The `httpx2.Auth` of one HTTP server: logs in when it answers 401 (or 403 for more scope).

    `awaiting_person` is true while the person is at the authorization page, so a
    server's start timeout does not run out on them, and `person()` is open meanwhile (the
    server sets it: its call deadlines stand still); `failure` says why a login failed.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    settings = config.oauth
    store = TokenStore(config, env, "")
    port = (settings.callback_port if settings else 0) or store.redirect_port() or free_port()
    loopback = Loopback(port)
    store.redirect = loopback.redirect

    class Login(OAuthClientProvider):
        awaiting_person = False
        failure = ""  # why the last login failed: the transport only says its connection closed
        person: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext

    waiting = contextlib.ExitStack()  # the person's time: from the redirect to the answer

    def done() -> None:
        provider.awaiting_person = False
        waiting.close()

    async def redirect(url: str) -> None:
        done()  # a login that never came to its callback (cancelled between) waits no more
        provider.awaiting_person, provider.failure = True, ""
        waiting.enter_context(provider.person())
        try:
            await loopback.start(parse_qs(urlsplit(url).query).get("state", [""])[0])
            await present(config.name, url)
        except BaseException as e:
            done()
            provider.failure = str(e) if isinstance(e, McpLoginError) else ""
            await loopback.close()
            raise

    async def callback() -> Any:
        try:
            return answered(await loopback.answer())
        except McpLoginError as e:
            provider.failure = str(e)
            raise
        finally:
            done()

    def answered(query: dict[str, str]) -> Any:
        if "error" in query:
            why = query.get("error_description") or query["error"]
            raise McpLoginError(
                f"its login was refused ({why}): run `agent mcp login {config.name}` to try again"
            )
        if not query.get("code"):
            raise McpLoginError(
                f"its login came back without a code: run `agent mcp login {config.name}` to try "
                "again"
            )
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[loopback.redirect],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    provider = Login(
        server_url=config.url,
        client_metadata=metadata,
        storage=store,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=(settings.client_metadata_url or None) if settings else None,
    )
    if settings is not None and settings.client_id and not settings.token_endpoint_auth_method:
        choose_auth_method(provider, store)
    # The SDK learns a token's end only when it gets one; a stored token's is given here,
    # so an expired one is refreshed rather than sent.
    provider.context.token_expiry_time = store.expires_at()
    return provider


def choose_auth_method(provider: Any, store: TokenStore) -> None:
    """A pre-registered client's secret goes to the token endpoint as the authorization
    server's metadata says it takes one (`auth_method`), once that metadata is read: the
    SDK would send it as `get_client_info` said before any was."""
    context = provider.context
    prepare = context.prepare_token_auth

    def prepare_token_auth(data: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        info, metadata = context.client_info, context.oauth_metadata
        if info is not None and info.client_secret and metadata is not None:
            method = auth_method(metadata.token_endpoint_auth_methods_supported)
            if info.token_endpoint_auth_method != method:
                update = {"token_endpoint_auth_method": method}
                context.client_info = info.model_copy(update=update)
            store.keep_auth_method(method)
        return prepare(data, headers)

    context.prepare_token_auth = prepare_token_auth


async def refuse(name: str, _url: str) -> None:
    """The `Present` of a run without a terminal: nobody can log in, so say how to."""
    raise McpLoginError(
        f"it needs you to log in: run `agent mcp login {name}` on a terminal, then try again"
    )


class LoginRequest(NamedTuple):
    """What a front end is asked before a login opens the browser (see `asking`)."""

    server: str
    url: str


def asking(ask: Callable[[Path, list], Awaitable[bool]], file: Path) -> Present:
    """The `Present` of a TUI or REPL session: the person is asked (the address shown), and
    the browser opens on a yes. `ask` is the session's trust question, given a `LoginRequest`."""

    async def present(name: str, url: str) -> None:
        if not await ask(file, [LoginRequest(name, url)]):
            raise McpLoginError(
                f"you did not log in: run `agent mcp login {name}` when you want its tools"
            )
        await open_in_browser(url)

    return present


async def open_in_browser(url: str) -> bool:
    """Python's `webbrowser` (so `$BROWSER` is honoured), off the event loop: a `$BROWSER`
    program is waited for."""
    import webbrowser

    return await asyncio.to_thread(webbrowser.open, url)
