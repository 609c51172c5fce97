"""A browser for `$BROWSER`: opens an authorization page and follows its redirects to the end,
as a person who says yes would, so a login's loopback listener gets its answer.

    BROWSER=$(python tests/support/browser.py --install FOLDER) agent mcp login NAME

`$BROWSER` names one program (Python's `webbrowser` does not split it into words), so
`--install` writes a small script into FOLDER that runs this one, and prints its path.
Only loopback addresses are visited. `$BROWSER_VISITS`, when set, names a file that
gets each address visited, one a line (for a test to read what the login asked for).
`$BROWSER_HOLD`, when set, names a FIFO: the browser writes "held" to `$BROWSER_VISITS`,
then waits to read a word from it before it visits anything — a person still at the
page until the test says they are done ("go"; anything else: they closed the page).
"""

import os
import select
import sys
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

REDIRECTS = (301, 302, 303, 307, 308)
HOLD_LIMIT = 600  # seconds: a test that never releases its hold still ends
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Stop(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # each redirect is followed below, where its address is checked


def install(folder: str) -> str:
    """A program for `$BROWSER` that runs this file with this Python."""
    script = os.path.join(folder, "browser")
    with open(script, "w") as out:
        out.write(f'#!/bin/sh\nexec "{sys.executable}" "{os.path.abspath(__file__)}" "$@"\n')
    os.chmod(script, 0o755)
    return script


def main() -> int:
    if sys.argv[1] == "--install":
        print(install(sys.argv[2]))
        return 0
    url = sys.argv[1]
    if os.environ.get("BROWSER_HOLD"):
        # Opened for reading and writing, so the open does not wait for the test's end.
        hold = os.open(os.environ["BROWSER_HOLD"], os.O_RDWR)
        if os.environ.get("BROWSER_VISITS"):
            with open(os.environ["BROWSER_VISITS"], "a") as visits:
                visits.write("held\n")
        ready, _, _ = select.select([hold], [], [], HOLD_LIMIT)
        said = os.read(hold, 100).decode().strip() if ready else ""
        os.close(hold)
        if said != "go":
            return 0  # the person closed the page: no answer comes back
    opener = urllib.request.build_opener(_Stop)
    for _ in range(10):
        if urlsplit(url).hostname not in LOOPBACK:
            print(f"browser: not a loopback address: {url}", file=sys.stderr)
            return 1
        if os.environ.get("BROWSER_VISITS"):
            with open(os.environ["BROWSER_VISITS"], "a") as visits:
                visits.write(url + "\n")
        try:
            with opener.open(url, timeout=30) as page:
                page.read()
                return 0
        except urllib.error.HTTPError as e:
            if e.code not in REDIRECTS or not e.headers.get("Location"):
                print(f"browser: {url} answered {e.code}", file=sys.stderr)
                return 1
            url = urljoin(url, e.headers["Location"])
    print("browser: too many redirects", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
