"""A small LSP client: servers, documents, diagnostics (used by tools).

`config.py` says which servers there are (configured, or known and found on
PATH) and for which files; `servers.py` starts them on first use, keeps each
file's text in sync and waits for what they publish; `client.py` is the one
module that speaks the protocol, through `pygls`'s language client and
`lsprotocol`'s types, imported only when a server starts; `diagnostics.py` is
what a server said about a file, compared with what it said before a change.
"""
