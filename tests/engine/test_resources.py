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
