"""`@path` attaches what it names, confined to the workspace like the file tools."""

from __future__ import annotations

import os

import pytest

from agent_cli.engine.items import NoticeItem, UserItem
from agent_cli.engine.mentions import LISTING_LIMIT, attach_mentions, mentions
from agent_cli.media import Attachment, Prompt
from agent_cli.providers.scripted import answer, calls
from agent_cli.tools.base import MODEL_RESULT_CAP, Effect, ToolContext, ToolResult, tool
from agent_cli.tools.workspace import Workspace
from tests.support.images import png
from tests.support.sessions import make_session


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text("def helper():\n    return 1\n")
    (root / "src" / "deep").mkdir()
    (root / "src" / "deep" / "x.txt").write_text("x")
    (root / "shot.png").write_bytes(png(640, 480))
    (root / "my notes.md").write_text("spaces work")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "key").write_text("PRIVATE KEY")
    os.symlink(secret, root / "link.txt")
    os.symlink(tmp_path / "outside", root / "linked")
    return root


def attach(text: str, root) -> tuple[Prompt, list[str]]:
    prompt, problems = attach_mentions(Prompt(text), Workspace(root))
    return prompt, problems


def test_mentions_are_found_once_and_not_inside_email_addresses():
    text = 'look at @src/util.py and @"my notes.md", mail a@b.com, again @src/util.py'
    assert mentions(text) == ["src/util.py", "my notes.md"]


def test_a_file_attaches_its_text_and_the_message_keeps_its_words(tree):
    prompt, problems = attach("look at @src/util.py, please", tree)
    assert problems == []
    assert prompt.text == "look at @src/util.py, please"
    assert prompt.attachments == (
        Attachment("file", "src/util.py", "def helper():\n    return 1\n"),
    )


def test_a_folder_attaches_its_listing(tree):
    prompt, _ = attach("what is in @src", tree)
    (folder,) = prompt.attachments
    assert folder.kind == "folder" and folder.label == "src/"
    assert folder.text.splitlines() == ["deep/", "deep/x.txt", "util.py"]


def test_a_big_folder_lists_only_so_many(tree):
    many = tree / "many"
    many.mkdir()
    for n in range(LISTING_LIMIT + 5):
        (many / f"f{n:04}").write_text("")
    (listing,) = attach("@many", tree)[0].attachments
    assert len(listing.text.splitlines()) == LISTING_LIMIT + 1
    assert listing.text.endswith(f"only the first {LISTING_LIMIT} are listed]")


def test_an_image_attaches_as_an_image_and_a_quoted_name_with_spaces_as_text(tree):
    prompt, _ = attach('see @shot.png and @"my notes.md"', tree)
    assert [image.label for image in prompt.images] == ["[image shot.png 640×480]"]
    assert prompt.attachments == (Attachment("file", "my notes.md", "spaces work"),)


def test_a_long_file_is_capped_like_read_file(tree):
    (tree / "big.txt").write_text("line\n" * 20_000)
    (big,) = attach("@big.txt", tree)[0].attachments
    assert len(big.text.encode()) <= MODEL_RESULT_CAP
    assert "cut here" in big.text


@pytest.mark.parametrize(
    "mention",
    ["@../secret.txt", "@link.txt", "@linked/key", "@linked", "@src/../../secret.txt"],
)
def test_nothing_outside_the_workspace_is_attached(tree, mention):
    prompt, problems = attach(f"read {mention}", tree)
    assert prompt.attachments == () and prompt.images == ()
    assert len(problems) == 1 and "is not attached" in problems[0]
    assert "outside the workspace" in problems[0]


def test_an_absolute_path_outside_is_refused_and_one_inside_is_attached(tree):
    secret = tree.parent / "secret.txt"
    prompt, problems = attach(f"@{secret} and @{tree / 'src' / 'util.py'}", tree)
    assert [a.label for a in prompt.attachments] == ["src/util.py"]
    assert len(problems) == 1 and "outside the workspace" in problems[0]
    assert "TOP SECRET" not in repr(prompt)


def test_home_and_mentions_of_nothing_stay_text(tree):
    prompt, problems = attach("ask @alice about @~/.ssh/id_rsa and @nowhere.py", tree)
    assert prompt.attachments == () and problems == []


def test_a_binary_file_is_said_not_attached(tree):
    prompt, problems = attach("@blob.bin", tree)
    assert prompt.attachments == ()
    assert problems == ["@blob.bin is not attached: it is a binary file (30 bytes)."]


async def test_a_sent_message_carries_its_attachments_to_the_model(tree):
    session, provider, _ = make_session(tree, [answer("ok")])
    await session.send("explain @src/util.py and @shot.png")
    user = session.conversation.items[0]
    assert isinstance(user, UserItem) and user.text == "explain @src/util.py and @shot.png"
    assert [a.label for a in user.attachments] == ["src/util.py"]
    (sent,) = provider.requests[0].messages
    assert sent.content == (
        "explain @src/util.py and @shot.png\n\n"
        '<attached file="src/util.py">\ndef helper():\n    return 1\n\n</attached>'
    )
    assert [image.name for image in sent.images] == ["shot.png"]


async def test_a_refused_mention_is_a_notice_and_the_message_still_goes(tree):
    session, provider, _ = make_session(tree, [answer("ok")])
    await session.send("read @../secret.txt")
    notices = [i for i in session.conversation.items if isinstance(i, NoticeItem)]
    assert len(notices) == 1 and "outside the workspace" in notices[0].text
    assert "TOP SECRET" not in provider.requests[0].messages[0].content


async def test_a_steered_message_attaches_its_mentions_too(tree):
    session: list = []

    @tool("hold", Effect.READ)
    async def hold(ctx: ToolContext) -> ToolResult:
        """Steer while it runs."""
        session[0].steer("and @src/util.py")
        return ToolResult("held")

    turns = [calls(("c1", "hold", "{}")), answer("ok")]
    made, provider, _ = make_session(tree, turns, tools=[hold], mode="full")
    session.append(made)
    await made.send("start")
    steered = provider.requests[1].messages[-1]
    assert steered.role == "user"
    assert steered.content.startswith('and @src/util.py\n\n<attached file="src/util.py">')


SECRET = "secret outside the workspace"


class SwappedAfterResolve(Workspace):
    """A workspace whose `sub` folder is swapped for a link to `outside` right after a path
    is resolved: the window a process running beside the agent can use."""

    def __init__(self, root, outside) -> None:
        super().__init__(root)
        self.outside = outside

    def resolve(self, path, write=False):
        real = super().resolve(path, write)
        if not (self.root / "sub").is_symlink():
            (self.root / "sub").rename(self.root / "sub-real")
            (self.root / "sub").symlink_to(self.outside, target_is_directory=True)
        return real


@pytest.mark.parametrize("mention", ["@sub/x.txt", "@sub", "@sub/inner"])
def test_a_folder_swapped_for_a_link_after_the_check_attaches_nothing_outside(tmp_path, mention):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "sub" / "inner").mkdir(parents=True)
    (root / "sub" / "x.txt").write_text("inside\n")
    (outside / "inner").mkdir(parents=True)
    (outside / "x.txt").write_text(SECRET + "\n")
    (outside / "inner" / "planted.txt").write_text(SECRET + "\n")
    prompt, problems = attach_mentions(
        Prompt(f"look at {mention}"), SwappedAfterResolve(root, outside)
    )
    seen = [a.text for a in prompt.attachments]
    assert not [t for t in seen if SECRET in t or "planted" in t or "x.txt" in t], seen
    assert prompt.attachments == () and len(problems) == 1, (seen, problems)
    assert "became a symbolic link" in problems[0], problems


def test_a_fifo_mentioned_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    prompt, problems = attach_mentions(Prompt("see @pipe"), Workspace(tmp_path))
    assert prompt.attachments == ()
    assert problems == ["@pipe is not attached: it is not a regular file."]
