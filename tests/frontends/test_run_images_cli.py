"""`agent run --image FILE` and `@path` through the real CLI and the fake server."""

from __future__ import annotations

import base64

from tests.support.cli import agent, err, saved
from tests.support.fake_openai import text
from tests.support.images import JPEG, png


def test_images_given_with_image_reach_the_model_as_image_parts(fake, workspace, tmp_path):
    shot, photo = tmp_path / "shot.png", tmp_path / "photo.jpg"
    shot.write_bytes(png(40, 30))
    photo.write_bytes(JPEG.read_bytes())
    fake.add(text("A red square and a logo."))
    result = agent(
        workspace, "run", "what are these?", "--image", str(shot), "--image", str(photo),
        fake=fake,
    )  # fmt: skip
    assert result.returncode == 0, err(result)
    user = fake.requests[0]["messages"][-1]
    assert user == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what are these?"},
            {"type": "image_url", "image_url": {
                "url": "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode()}},
            {"type": "image_url", "image_url": {
                "url": "data:image/jpeg;base64," + base64.b64encode(JPEG.read_bytes()).decode()}},
        ],
    }  # fmt: skip


def test_a_file_given_with_image_that_is_not_one_stops_before_the_run(fake, workspace):
    (workspace / "notes.txt").write_text("hello")
    result = agent(workspace, "run", "hi", "--image", str(workspace / "notes.txt"), fake=fake)
    assert result.returncode == 2
    assert "notes.txt is not a PNG, JPEG, GIF or WebP image" in err(result)
    assert "Traceback" not in err(result) and fake.requests == []
    missing = agent(workspace, "run", "hi", "--image", "nope.png", fake=fake)
    assert missing.returncode == 2 and "nope.png could not be read" in err(missing)


def test_at_path_in_a_run_attaches_the_file_and_the_store_keeps_a_chip(fake, workspace):
    (workspace / "util.py").write_text("def helper():\n    return 42\n")
    (workspace / "shot.png").write_bytes(png(8, 8))
    fake.add(text("It returns 42."))
    result = agent(workspace, "run", "what does @util.py return? see @shot.png", fake=fake)
    assert result.returncode == 0, err(result)
    user = fake.requests[0]["messages"][-1]
    assert user["content"][0] == {
        "type": "text",
        "text": "what does @util.py return? see @shot.png\n\n"
        '<attached file="util.py">\ndef helper():\n    return 42\n\n</attached>',
    }
    assert user["content"][1]["type"] == "image_url"
    (conversation,) = saved()
    first = conversation["items"][0]
    assert first["attachments"][0]["label"] == "util.py"
    assert first["images"][0]["name"] == "shot.png" and "data" not in first["images"][0]


def test_a_conversation_with_images_resumed_sends_them_again_from_the_store(
    fake, workspace, tmp_path
):
    shot = tmp_path / "shot.png"
    shot.write_bytes(png(16, 16))
    fake.add(text("A square."), text("Still a square."))
    assert agent(workspace, "run", "what is it?", "--image", str(shot), fake=fake).returncode == 0
    result = agent(workspace, "run", "--continue", "and now?", fake=fake)
    assert result.returncode == 0, err(result)
    first, _answer, again = fake.requests[1]["messages"][1:]
    uri = "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode()
    assert first["content"][1] == {"type": "image_url", "image_url": {"url": uri}}
    assert again == {"role": "user", "content": "and now?"}


def test_export_names_what_was_attached_and_leaves_its_content_out(fake, workspace):
    (workspace / "util.py").write_text("SECRET_BODY = 1\n")
    (workspace / "shot.png").write_bytes(png(8, 8))
    fake.add(text("Seen."))
    assert agent(workspace, "run", "look at @util.py and @shot.png", fake=fake).returncode == 0
    (conversation,) = saved()
    exported = agent(workspace, "sessions", "export", conversation["id"], fake=fake)
    shown = exported.stdout.decode()
    assert "Attached: `[image shot.png 8×8]`, `[file util.py]`" in shown
    assert "SECRET_BODY" not in shown
