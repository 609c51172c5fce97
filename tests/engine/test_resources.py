"""Which `@…` mentions are an MCP server's resource (engine/resources.py); reading them is
tested through the front ends with a real server (tests/frontends/test_resource_mentions_cli)."""

from __future__ import annotations

from agent_cli.engine.resources import ResourceMention, resource_mentions


def test_a_resource_mention_is_a_server_name_then_a_uri_with_its_scheme():
    text = 'see @docs:note://hello, @docs:file:///a/b.md and @"docs:greeting://Ann"'
    assert resource_mentions(text) == [
        ResourceMention("docs:note://hello,", "docs", "note://hello,"),
        ResourceMention("docs:file:///a/b.md", "docs", "file:///a/b.md"),
        ResourceMention("docs:greeting://Ann", "docs", "greeting://Ann"),
    ]


def test_paths_lines_ports_and_addresses_are_no_resource_mentions():
    text = "@src/x.py @x.py:12 @localhost:8080 me@docs:note://a @C:/x @docs: @:note://a"
    text += ' @"docs:note://a b"'  # a URI has no space
    assert resource_mentions(text) == []


async def test_a_stop_ends_a_slow_read_of_a_mention_and_keeps_the_message(tmp_path):
    """Reading a mentioned resource may start a server or wait on a login: it is part of
    the run, so a stop (Ctrl-C, Esc) ends it; the message is kept as written, and the
    model is asked nothing."""
    import asyncio

    from agent_cli.engine.backend import StopReason
    from agent_cli.engine.items import NoticeItem, UserItem
    from tests.support.sessions import make_session
    from tests.support.waiting import eventually, within

    reading = asyncio.Event()

    class Held:
        """A ResourceSource whose server never answers (the port wiring fills in)."""

        async def servers(self):
            return ["docs"]

        async def read(self, server, uri):
            reading.set()
            await asyncio.Event().wait()

        def listed(self):
            return None

        async def refresh(self, start=False):
            return False

    session, provider, _ = make_session(tmp_path, [])
    session.resources = Held()
    sent = asyncio.ensure_future(session.send("see @docs:note://a"))
    await eventually(reading.is_set, "the read to begin")
    assert session.running
    session.stop()
    result = await within(sent)
    assert result.reason is StopReason.STOPPED
    items = session.conversation.items
    assert [i.text for i in items if isinstance(i, UserItem)] == ["see @docs:note://a"]
    assert any(isinstance(i, NoticeItem) and i.text == "Stopped." for i in items)
    assert provider.requests == []
