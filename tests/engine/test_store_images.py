"""Images are stored by reference: bytes in files beside the conversation, never base64."""

from __future__ import annotations

from agent_cli.backends.context import to_messages
from agent_cli.engine.items import Conversation, ToolItem, UserItem
from agent_cli.engine.store import Store
from agent_cli.media import Attachment, image_from_bytes
from tests.support.images import JPEG, png


def with_images() -> Conversation:
    shot = image_from_bytes(png(64, 48), "shot.png")
    photo = image_from_bytes(JPEG.read_bytes(), "python.jpg")
    c = Conversation(workspace="/w")
    c.items += [
        UserItem("what is this", images=(shot,), attachments=(Attachment("file", "a.py", "x"),)),
        ToolItem("read_file", "c1", state="done", result="python.jpg", images=(photo,)),
        UserItem("and this one again", images=(shot,)),
    ]
    return c


def test_the_bytes_are_in_files_beside_the_log_and_the_log_names_them(tmp_path):
    store, c = Store(tmp_path), with_images()
    store.save(c)
    shot, photo = c.items[0].images[0], c.items[1].images[0]
    folder = tmp_path / f"{c.id}.media"
    assert sorted(p.name for p in folder.iterdir()) == sorted([shot.file, photo.file])
    assert (folder / shot.file).read_bytes() == shot.data  # one file for the same bytes twice
    assert (folder / photo.file).read_bytes() == photo.data
    log = store.path(c.id).read_bytes()
    assert shot.base64()[:40].encode() not in log and photo.base64()[:40].encode() not in log
    assert shot.file.encode() in log and b'"width":64' in log


def test_a_conversation_with_images_loads_with_their_bytes(tmp_path):
    store, c = Store(tmp_path), with_images()
    store.save(c)
    loaded = store.load(c.id)
    assert loaded.to_json() == c.to_json()
    assert loaded.items[0].images == c.items[0].images
    assert loaded.items[1].images[0].data == JPEG.read_bytes()
    assert loaded.items[0].attachments == (Attachment("file", "a.py", "x"),)


def test_an_image_added_by_a_later_save_is_written_before_its_record(tmp_path):
    store, c = Store(tmp_path), Conversation(workspace="/w")
    c.items.append(UserItem("first"))
    store.save(c)
    later = image_from_bytes(png(3, 3), "later.png")
    c.items.append(UserItem("second", images=(later,)))
    store.save(c, changed=set())
    assert (store.media(c.id) / later.file).read_bytes() == later.data
    assert store.load(c.id).items[1].images == (later,)


def test_an_image_whose_file_is_gone_loads_without_bytes_and_the_model_is_told(tmp_path):
    store, c = Store(tmp_path), with_images()
    store.save(c)
    for path in store.media(c.id).iterdir():
        path.unlink()
    loaded = store.load(c.id)
    assert loaded.items[0].images[0].data == b""
    first = to_messages(loaded.items)[0]
    assert first.images == ()
    assert "[image shot.png 64×48]: its stored file is gone, so it is not shown." in first.content
    store.save(loaded)  # saving it again keeps the reference, and does not fail
    assert store.load(c.id).items[0].images[0].file == c.items[0].images[0].file


def test_removing_a_conversation_removes_its_images(tmp_path):
    store, c = Store(tmp_path), with_images()
    store.save(c)
    store.remove(c.id)
    assert not store.media(c.id).exists()
    assert store.list() == []


def test_a_fork_keeps_the_images_in_memory_and_in_its_own_folder(tmp_path):
    store, c = Store(tmp_path), with_images()
    store.save(c)
    copy = store.fork(c)
    assert copy.items[0].images == c.items[0].images  # bytes and all: the model still sees them
    store.remove(c.id)
    assert store.load(copy.id).items[1].images[0].data == JPEG.read_bytes()
