"""An OAuth-protected MCP server for the tests, built on the SDK's authorization-server pieces.

    python oauth_server.py --port PORT --log FILE [--token-seconds N] [--revoke-at-call]
                           [--client ID:SECRET:METHOD:CALLBACK_PORT] [--auth-methods M,M]

One process is both the authorization server (metadata, dynamic registration,
an authorize endpoint that says yes at once by redirecting with a code, the token
endpoint) and the resource server: Streamable HTTP on `/mcp`, which answers 401
without a valid token. Tokens carry the scope `read`; the tool `admin` needs `admin`
too, and a call to it with less is answered 403 `insufficient_scope` (a step-up).
Access tokens live `--token-seconds` (default an hour), so a test can see a refresh.

`POST /test/revoke` drops every token it issued (access and refresh): the next MCP
request is answered 401 and only a new login gets in, as when a user revokes access.
`--revoke-at-call` does that at the first `tools/call`, which is answered 401 itself: a
token revoked between a client's listing and its call.

`--client` registers a client beforehand (as a person does by hand): its id and secret,
the token endpoint auth method it was registered with (`client_secret_basic` or
`client_secret_post`; a token request that sends the secret otherwise is refused 401
`invalid_client`) and its one redirect, `http://127.0.0.1:CALLBACK_PORT/callback`
(several clients: separated by commas).
`--auth-methods` is what the metadata says in `token_endpoint_auth_methods_supported`
(the SDK's own says both).

Every token request is a JSON line in `--log` (its grant type, scopes, resource), and
so is every MCP request's bearer token ("bearer"), for the tests to read.
"""

import argparse
import json
import secrets
import time

READ, ADMIN = "read", "admin"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--revoke-at-call", action="store_true")
    parser.add_argument("--client", default="")
    parser.add_argument("--auth-methods", default="")
    options = parser.parse_args()
    if options.auth_methods:
        advertise(options.auth_methods.split(","))
    serve(options.port, options.log, options.token_seconds, options.revoke_at_call, options.client)


def advertise(methods: list[str]) -> None:
    """The authorization server's metadata says these token endpoint auth methods only."""
    import mcp.server.auth.routes as routes

    built = routes.build_metadata

    def build_metadata(*args, **kwargs):
        metadata = built(*args, **kwargs)
        metadata.token_endpoint_auth_methods_supported = methods
        return metadata

    routes.build_metadata = build_metadata


def note(log: str, **fields) -> None:
    with open(log, "a") as out:
        out.write(json.dumps(fields) + "\n")


def provider(log: str, lifetime: int, client: str = ""):
    from mcp.server.auth.provider import (
        AccessToken,
        AuthorizationCode,
        RefreshToken,
        construct_redirect_uri,
    )
    from mcp.shared.auth import OAuthToken

    class Provider:
        """Says yes to every authorization: the person of the test always agrees."""

        def __init__(self) -> None:
            self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}
            from mcp.shared.auth import OAuthClientInformationFull

            for one in filter(None, client.split(",")):
                client_id, secret, method, port = one.split(":")
                self.clients[client_id] = OAuthClientInformationFull(
                    client_id=client_id,
                    client_secret=secret,
                    token_endpoint_auth_method=method,
                    redirect_uris=[f"http://127.0.0.1:{port}/callback"],
                    grant_types=["authorization_code", "refresh_token"],
                    scope=f"{READ} {ADMIN}",
                )

        async def get_client(self, client_id):
            return self.clients.get(client_id)

        async def register_client(self, client_info):
            client_info.scope = f"{READ} {ADMIN}"  # may ask for either (a step-up asks for both)
            self.clients[client_info.client_id] = client_info

        async def authorize(self, client, params):
            code = secrets.token_urlsafe(16)
            self.codes[code] = AuthorizationCode(
                code=code,
                scopes=params.scopes or [READ],
                expires_at=time.time() + 300,
                client_id=client.client_id,
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
            )
            return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

        async def load_authorization_code(self, client, code):
            return self.codes.get(code)

        async def exchange_authorization_code(self, client, code):
            del self.codes[code.code]
            note(
                log,
                grant="authorization_code",
                scopes=code.scopes,
                resource=code.resource,
                client=client.client_id,
            )
            return self.issue(client.client_id, code.scopes, code.resource)

        async def load_refresh_token(self, client, refresh_token):
            return self.refresh.get(refresh_token)

        async def exchange_refresh_token(self, client, refresh_token, scopes):
            del self.refresh[refresh_token.token]
            chosen = scopes or refresh_token.scopes
            note(log, grant="refresh_token", scopes=chosen, resource=refresh_token.resource)
            return self.issue(client.client_id, chosen, refresh_token.resource)

        async def load_access_token(self, token):
            found = self.access.get(token)
            note(log, bearer=token, valid=bool(found and found.expires_at > time.time()))
            if found is None or found.expires_at <= time.time():
                return None
            return found

        async def revoke_token(self, token):
            self.access.pop(token.token, None)

        def revoke_all(self) -> None:
            self.access.clear()
            self.refresh.clear()

        def issue(self, client_id, scopes, resource):
            access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
            until = int(time.time()) + lifetime
            self.access[access] = AccessToken(
                token=access,
                client_id=client_id,
                scopes=scopes,
                expires_at=until,
                resource=resource,
            )
            self.refresh[refresh] = RefreshToken(
                token=refresh, client_id=client_id, scopes=scopes, resource=resource
            )
            return OAuthToken(
                access_token=access,
                expires_in=lifetime,
                refresh_token=refresh,
                scope=" ".join(scopes),
            )

    return Provider()


def step_up(app, base: str, revoke=None):
    """A call to `admin` with a token lacking the `admin` scope: 403 insufficient_scope.
    With `revoke` (called once): the first call revokes every token and is answered 401."""

    revoked = []

    async def guarded(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        user = scope.get("user")
        granted = set(getattr(scope.get("auth"), "scopes", None) or [])
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        asked = isinstance(request, dict) and request.get("method") == "tools/call"
        known = getattr(user, "is_authenticated", False)
        admin = asked and request.get("params", {}).get("name") == "admin"
        metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
        if asked and known and revoke is not None and not revoked:
            revoked.append(revoke())
            challenge = f'Bearer error="invalid_token", resource_metadata="{metadata}"'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", challenge.encode())],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return None
        if admin and known and ADMIN not in granted:
            challenge = (
                f'Bearer error="insufficient_scope", scope="{READ} {ADMIN}", '
                f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"www-authenticate", challenge.encode())],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return None

        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:  # the body was read: what follows (a disconnect) is the client's
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return guarded


def serve(
    port: int, log: str, lifetime: int, revoke_at_call: bool = False, client: str = ""
) -> None:
    import uvicorn
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
    from mcp.server.mcpserver import MCPServer

    base = f"http://127.0.0.1:{port}"
    issuer = provider(log, lifetime, client)
    server = MCPServer(
        "guarded",
        auth_server_provider=issuer,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[READ, ADMIN], default_scopes=[READ]
            ),
            required_scopes=[READ],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def hello(name: str) -> str:
        """Greet someone (any token with `read`)."""
        return f"hello, {name}"

    @server.tool()
    def admin() -> str:
        """Something only a token with `admin` may do."""
        return "admin done"

    from starlette.middleware import Middleware
    from starlette.responses import Response

    def revoke_now() -> None:
        issuer.revoke_all()
        note(log, revoked=True)

    @server.custom_route("/test/revoke", methods=["POST"])
    async def revoke_route(_request):
        revoke_now()
        return Response(status_code=204)

    app = server.streamable_http_app()
    # Innermost: the step-up check runs after authentication (it reads the token's scopes).
    at_call = revoke_now if revoke_at_call else None
    app.user_middleware.append(Middleware(_StepUp, base=base, revoke=at_call))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


class _StepUp:
    def __init__(self, app, base: str, revoke=None) -> None:
        self.guarded = step_up(app, base, revoke)

    async def __call__(self, scope, receive, send):
        await self.guarded(scope, receive, send)


if __name__ == "__main__":
    main()
