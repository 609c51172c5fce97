"""A real language server (pygls) whose answers the test writes into the file itself.

    python -m tests.support.lsp_servers.fake

On every open and change of a document it publishes one error for each line
holding `ERROR: message` (code E1, at that line). A text holding `CRASH`
makes it exit with code 3 before answering; `NETWORK <port>` makes it try to
connect to that loopback port and publish `network: connected` or
`network: refused` (an error on line 1), so a test sees what the sandbox lets
it do. It offers definitions: `def NAME` lines, asked from any use of NAME.
"""

from __future__ import annotations

import os
import re
import socket
import sys

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

server = LanguageServer("fake-lsp", "1")
CRASH_CODE = 3


def _publish(uri: str, version: int | None, text: str) -> None:
    if "CRASH" in text:
        sys.stderr.write("fake-lsp: asked to crash\n")
        sys.stderr.flush()
        os._exit(CRASH_CODE)
    found = []
    for number, line in enumerate(text.splitlines()):
        match = re.search(r"ERROR: (.*)", line)
        if match:
            found.append(_error(number, match.group(1)))
    network = re.search(r"NETWORK (\d+)", text)
    if network:
        try:
            with socket.create_connection(("127.0.0.1", int(network.group(1))), timeout=5):
                said = "network: connected"
        except OSError:
            said = "network: refused"
        found.append(_error(0, said))
    server.text_document_publish_diagnostics(
        t.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=found)
    )


def _error(line: int, message: str) -> t.Diagnostic:
    where = t.Range(t.Position(line, 0), t.Position(line, 1))
    return t.Diagnostic(where, message, severity=t.DiagnosticSeverity.Error, code="E1")


@server.feature(t.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: t.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    _publish(document.uri, document.version, document.text)


@server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: t.DidChangeTextDocumentParams) -> None:
    document = server.workspace.get_text_document(params.text_document.uri)
    _publish(document.uri, params.text_document.version, document.source)


@server.feature(t.TEXT_DOCUMENT_DEFINITION)
def definition(params: t.DefinitionParams) -> list[t.Location]:
    document = server.workspace.get_text_document(params.text_document.uri)
    lines = document.source.splitlines()
    word = re.findall(r"\w+", lines[params.position.line][params.position.character :])
    name = word[0] if word else ""
    found = []
    for number, line in enumerate(lines):
        if re.match(rf"\s*def {re.escape(name)}\b", line):
            where = t.Range(t.Position(number, 0), t.Position(number, 1))
            found.append(t.Location(document.uri, where))
    return found


if __name__ == "__main__":
    server.start_io()
