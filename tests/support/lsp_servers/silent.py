"""A language server that reads everything sent to it and never answers anything.

python -m tests.support.lsp_servers.silent
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    while sys.stdin.buffer.read(65536):
        pass
