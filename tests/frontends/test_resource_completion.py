"""What `@server:` completes (frontends/resource_completion.py), over a listing as the
resource source keeps it; the front ends' menus are tested with a real server
(test_resource_mentions_cli, tui/test_resource_mentions_tui)."""

from __future__ import annotations

from agent_cli.frontends.resource_completion import (
    resource_candidates,
    server_candidates,
    split_query,
)
from agent_cli.tools.mcp_resources import ResourceEntry

LISTED = {
    "docs": [
        ResourceEntry("docs", "note://hello", "hello"),
        ResourceEntry("docs", "note://long", "long"),
        ResourceEntry("docs", "greeting://{name}", "greeting", template=True),
    ],
    "db": [],
}


def test_only_a_listed_servers_name_and_colon_make_a_resource_query():
    assert split_query("docs:no", LISTED) == ("docs", "no")
    assert split_query("docs:", LISTED) == ("docs", "")
    assert split_query("src/x.py", LISTED) is None
    assert split_query("other:note://a", LISTED) is None
    assert split_query("docs:no", None) is None


def test_what_the_uri_begins_with_comes_first_then_what_holds_it():
    found = resource_candidates("docs", "lo", LISTED)
    assert [c.label for c in found] == ["docs:note://hello", "docs:note://long"]
    found = resource_candidates("docs", "note://lo", LISTED)
    assert [(c.value, c.meta) for c in found] == [("@docs:note://long ", "long")]


def test_a_template_completes_as_listed_without_a_space_to_be_filled_in():
    (greeting,) = resource_candidates("docs", "gr", LISTED)
    assert (greeting.value, greeting.meta) == ("@docs:greeting://{name}", "template")


def test_a_servers_name_is_offered_while_it_is_typed_when_it_has_resources():
    assert [c.value for c in server_candidates("d", LISTED)] == ["@docs:"]
    assert server_candidates("docs:", LISTED) == [] and server_candidates("", LISTED) == []
