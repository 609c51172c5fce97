"""Checkpoints and the branch line against real git, in temporary folders (SPEC §8)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.errors import AgentError
from agent_cli.git import (
    CHECKPOINT_MAX_FILE_BYTES,
    CheckpointError,
    Checkpoints,
    NothingToUndo,
    Restored,
    branch_status,
    checkpoints_available,
)

pytestmark = pytest.mark.skipif(not checkpoints_available(), reason="git is not installed")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "src").mkdir()
    (folder / "src" / "b.py").write_text("print('b')\n")
    return folder.resolve()


@pytest.fixture(params=["by name", "by walk"])
def cp(ws: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Checkpoints:
    """Checkpoints of `ws`, staging changed files by name (few) or by `add -A` (many)."""
    if request.param == "by walk":
        monkeypatch.setattr("agent_cli.git.checkpoints._STAGE_BY_NAME", 0)
    return Checkpoints(ws)


def files(folder: Path, skip: tuple[str, ...] = (".git",)) -> dict[str, bytes]:
    """Every file under `folder` (links as their target text), by relative path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] in skip:
            continue
        if path.is_symlink():
            found[str(relative)] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[str(relative)] = path.read_bytes()
    return found


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", XDG_CONFIG_HOME=str(home))
    return env


def project_git(repo: Path, *args: str) -> str:
    """git in the project's own repository, as its owner would run it."""
    result = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        env=clean_env(repo.parent),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def shadow_git(cp: Checkpoints, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_DIR"] = str(cp.shadow)
    return subprocess.run(
        ["git", *args], env=env, capture_output=True, text=True, check=True
    ).stdout


def make_repo(ws: Path) -> None:
    project_git(ws, "init", "-q", "-b", "main")
    project_git(ws, "add", "-A")
    project_git(ws, "commit", "-q", "-m", "init")


def booby_trap(ws: Path, tmp_path: Path) -> Path:
    """Make the project's repository run a program on fsmonitor, filters and hooks."""
    marker = tmp_path / "TRIGGERED"
    program = tmp_path / "evil.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    program.chmod(0o755)
    project_git(ws, "config", "core.fsmonitor", str(program))
    project_git(ws, "config", "filter.evil.clean", str(program))
    project_git(ws, "config", "filter.evil.smudge", str(program))
    project_git(ws, "config", "filter.evil.required", "true")
    (ws / ".gitattributes").write_text("* filter=evil\n")
    hooks = ws / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("pre-commit", "post-commit", "post-checkout", "post-index-change"):
        shutil.copy(program, hooks / hook)
    return marker


# -- record and undo ----------------------------------------------------------------------


def test_undo_restores_an_edited_file(ws: Path, cp: Checkpoints):
    before = files(ws)
    assert cp.record("c1", "Edit a.txt") == []
    (ws / "a.txt").write_text("ALPHA, changed\n")
    restored = cp.undo("c1")
    assert restored == Restored("Edit a.txt", [("M", "a.txt")])
    assert files(ws) == before
    assert restored.summary("c1") == (
        "Restored 1 file to before 'Edit a.txt' (conversation c1): M a.txt"
    )


def test_files_a_command_created_are_removed_with_their_folders(ws: Path, cp: Checkpoints):
    before = files(ws)
    cp.record("c1", "Run make")
    subprocess.run(
        "echo made > made.txt && mkdir -p out/deep && echo x > out/deep/x.txt && "
        "echo more >> src/b.py",
        shell=True,
        cwd=ws,
        check=True,
    )
    restored = cp.undo("c1")
    assert restored.changes == [("D", "made.txt"), ("D", "out/deep/x.txt"), ("M", "src/b.py")]
    assert files(ws) == before
    assert not (ws / "out").exists()


def test_a_deleted_file_comes_back(ws: Path, cp: Checkpoints):
    before = files(ws)
    cp.record("c1", "Run rm")
    (ws / "src" / "b.py").unlink()
    (ws / "src").rmdir()
    assert cp.undo("c1").changes == [("A", "src/b.py")]
    assert files(ws) == before


def test_each_undo_steps_back_one_checkpoint(ws: Path, cp: Checkpoints):
    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("one\n")
    cp.record("c1", "Run echo\nwith a second line")
    (ws / "a.txt").write_text("two\n")
    (ws / "new.txt").write_text("new\n")

    first = cp.undo("c1")
    assert first.label == "Run echo\nwith a second line"
    assert (ws / "a.txt").read_text() == "one\n" and not (ws / "new.txt").exists()
    second = cp.undo("c1")
    assert second == Restored("Edit a.txt", [("M", "a.txt")])
    assert (ws / "a.txt").read_text() == "alpha\n"
    with pytest.raises(NothingToUndo):
        cp.undo("c1")


def test_nothing_to_undo_is_a_clear_agent_error(ws: Path, cp: Checkpoints):
    with pytest.raises(NothingToUndo) as caught:
        cp.undo("c1")  # no shadow repository yet
    assert isinstance(caught.value, AgentError) and caught.value.exit_code == 1
    assert "Nothing to undo in conversation c1" in str(caught.value)
    cp.record("c2", "Edit a.txt")
    with pytest.raises(NothingToUndo):
        cp.undo("c1")  # the repository exists, this conversation has no checkpoint


def test_a_checkpoint_that_changed_nothing_is_skipped(ws: Path, cp: Checkpoints):
    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("changed\n")
    cp.record("c1", "Run true")  # the command changed nothing
    assert cp.undo("c1") == Restored("Edit a.txt", [("M", "a.txt")])
    with pytest.raises(NothingToUndo):
        cp.undo("c1")


def test_only_no_op_checkpoints_left_is_nothing_to_undo(ws: Path, cp: Checkpoints):
    cp.record("c1", "Run true")
    with pytest.raises(NothingToUndo, match="already are as they were"):
        cp.undo("c1")


def test_conversations_have_their_own_checkpoints(ws: Path):
    one, two = Checkpoints(ws), Checkpoints(ws)  # two sessions in one workspace
    one.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("by c1\n")
    two.record("c2", "Edit src/b.py")
    (ws / "src" / "b.py").write_text("by c2\n")

    assert two.undo("c2").changes == [("M", "src/b.py")]
    assert (ws / "a.txt").read_text() == "by c1\n"  # c1's change is not c2's to undo
    with pytest.raises(NothingToUndo):
        two.undo("c2")
    assert one.undo("c1").changes == [("M", "a.txt")]
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert one.shadow == two.shadow
    assert one.shadow.parent == paths.data_dir() / "checkpoints"


def test_odd_conversation_ids_are_kept_apart(ws: Path, cp: Checkpoints):
    cp.record("../weird id/", "Edit a.txt")
    (ws / "a.txt").write_text("x\n")
    with pytest.raises(NothingToUndo):
        cp.undo("weird id")
    assert cp.undo("../weird id/").changes == [("M", "a.txt")]


def test_type_changes_modes_and_links_are_restored(ws: Path, cp: Checkpoints):
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (ws / "link").symlink_to("a.txt")
    before = files(ws)
    cp.record("c1", "Run shuffle")
    script.chmod(0o644)
    (ws / "link").unlink()
    (ws / "link2").symlink_to("src")
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()  # a file became a folder
    (ws / "a.txt" / "inner").write_text("in\n")
    cp.undo("c1")
    assert files(ws) == before
    assert script.stat().st_mode & stat.S_IXUSR
    assert (ws / "link").is_symlink() and not (ws / "link2").exists()


def test_records_from_many_threads_all_land(ws: Path, cp: Checkpoints):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: cp.record("c1", f"step {i}"), range(8)))
    assert results == [[]] * 8
    refs = shadow_git(cp, "for-each-ref", "--format=%(refname)", "refs/checkpoints/c1/")
    assert sorted(refs.split()) == sorted(f"refs/checkpoints/c1/{n}" for n in range(1, 9))


def test_undo_keeps_the_state_it_replaced(ws: Path, cp: Checkpoints):
    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("keep me\n")
    cp.undo("c1")
    kept = shadow_git(cp, "show", "refs/undone/c1/1:a.txt")
    assert kept == "keep me\n"


# -- what is left out ---------------------------------------------------------------------


def test_ignored_files_and_folders_are_never_touched(ws: Path, cp: Checkpoints):
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "app.log").write_text("log 1\n")
    modules = ws / "node_modules" / "pkg"
    modules.mkdir(parents=True)
    (modules / "index.js").write_text("v1\n")
    (ws / "src" / "__pycache__").mkdir()
    (ws / "src" / "__pycache__" / "b.pyc").write_bytes(b"pyc1")
    notices = cp.record("c1", "Run npm install")
    assert notices == ["Checkpoints leave out node_modules: undo does not restore ignored folders."]

    (ws / "app.log").write_text("log 2\n")
    (ws / "new.log").write_text("new\n")
    (modules / "index.js").write_text("v2\n")
    (modules / "added.js").write_text("added\n")
    (ws / "src" / "__pycache__" / "b.pyc").write_bytes(b"pyc2")
    (ws / "a.txt").write_text("changed\n")

    assert cp.undo("c1").changes == [("M", "a.txt")]
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert (ws / "app.log").read_text() == "log 2\n" and (ws / "new.log").exists()
    assert (modules / "index.js").read_text() == "v2\n" and (modules / "added.js").exists()
    assert (ws / "src" / "__pycache__" / "b.pyc").read_bytes() == b"pyc2"
    tree = shadow_git(cp, "ls-tree", "-r", "--name-only", "refs/undone/c1/1")
    assert tree.split() == [".gitignore", "a.txt", "src/b.py"]


def test_the_left_out_folders_are_named_once_per_workspace_not_per_conversation(
    ws: Path, cp: Checkpoints
):
    (ws / "node_modules").mkdir()
    said = "Checkpoints leave out node_modules: undo does not restore ignored folders."
    assert cp.record("c1", "Edit a.txt") == [said]
    assert cp.record("c1", "Edit a.txt") == []
    later = Checkpoints(ws)  # the next conversation, or the next start of the agent
    assert later.record("c2", "Edit a.txt") == []
    (ws / "dist").mkdir()
    newest = Checkpoints(ws)
    assert newest.record("c3", "Edit a.txt") == [
        "Checkpoints leave out dist: undo does not restore ignored folders."
    ]
    other = ws / "other"
    other.mkdir()
    (other / "node_modules").mkdir()
    assert Checkpoints(other).record("c4", "Edit x") == [said], "another workspace hears it"


def test_the_agents_own_folders_inside_the_workspace_are_left_out(
    ws: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(ws / "home data"))  # an agent started in ~
    stored = paths.conversations_dir() / "c1.json"
    stored.parent.mkdir(parents=True)
    stored.write_text("version 1")
    cp = Checkpoints(ws)
    assert cp.shadow.is_relative_to(ws)
    cp.record("c1", "Edit a.txt")
    stored.write_text("version 2")
    (ws / "a.txt").write_text("changed\n")
    cp.record("c1", "Edit src/b.py")  # the shadow repository is not copied into itself
    (ws / "src" / "b.py").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "src/b.py")]
    assert cp.undo("c1").changes == [("M", "a.txt")]
    assert stored.read_text() == "version 2"


def test_a_file_ignored_later_leaves_the_checkpoints(ws: Path, cp: Checkpoints):
    (ws / "out.txt").write_text("one\n")
    cp.record("c1", "Edit .gitignore")
    (ws / ".gitignore").write_text("out.txt\n")
    cp.record("c1", "Run build")
    (ws / "out.txt").write_text("two\n")
    (ws / "a.txt").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "a.txt")]  # out.txt is ignored now: untouched
    assert (ws / "out.txt").read_text() == "two\n"
    # Before the .gitignore existed, out.txt was in the checkpoint: it comes back as it was.
    assert cp.undo("c1").changes == [("D", ".gitignore"), ("A", "out.txt")]
    assert (ws / "out.txt").read_text() == "one\n"


def test_files_over_10_mib_are_left_out_with_a_notice(ws: Path, cp: Checkpoints):
    big = ws / "data" / "huge.bin"
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(CHECKPOINT_MAX_FILE_BYTES + 1)  # sparse: instant
    notices = cp.record("c1", "Edit a.txt")
    assert notices == [
        "Left out of checkpoints (over 10 MiB, undo cannot restore them): data/huge.bin."
    ]
    assert cp.record("c1", "Edit a.txt") == []  # said once
    with open(ws / "later.bin", "wb") as f:
        f.truncate(CHECKPOINT_MAX_FILE_BYTES + 5)
    (ws / "a.txt").write_text("changed\n")
    notices = cp.record("c1", "Run dd")
    assert notices == [
        "Left out of checkpoints (over 10 MiB, undo cannot restore them): data/huge.bin, later.bin."
    ]
    assert cp.undo("c1") == Restored("Edit a.txt", [("M", "a.txt")])
    assert big.stat().st_size == CHECKPOINT_MAX_FILE_BYTES + 1
    assert (ws / "later.bin").exists()  # left out: never removed either
    stored = sum(p.stat().st_size for p in cp.shadow.rglob("*") if p.is_file())
    assert stored < 1024 * 1024


def test_a_file_that_grows_too_big_is_given_back_as_it_was(ws: Path, cp: Checkpoints):
    cp.record("c1", "Run generate")
    with open(ws / "a.txt", "r+b") as f:
        f.truncate(CHECKPOINT_MAX_FILE_BYTES + 1)
    assert cp.record("c1", "Edit src/b.py")  # a notice names a.txt
    (ws / "src" / "b.py").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "src/b.py")]
    assert (ws / "a.txt").stat().st_size == CHECKPOINT_MAX_FILE_BYTES + 1
    assert cp.undo("c1").changes == [("A", "a.txt")]
    assert (ws / "a.txt").read_text() == "alpha\n"


def test_a_failed_undo_puts_back_what_it_moved_aside(
    ws: Path, cp: Checkpoints, monkeypatch: pytest.MonkeyPatch
):
    cp.record("c1", "Run generate")
    with open(ws / "a.txt", "r+b") as f:
        f.truncate(CHECKPOINT_MAX_FILE_BYTES + 1)
    real_git = cp._git

    def failing_read_tree(*args: str, **kwargs: object) -> bytes:
        if args[0] == "read-tree":
            raise CheckpointError("git read-tree failed (simulated)")
        return real_git(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cp, "_git", failing_read_tree)
    with pytest.raises(CheckpointError, match="simulated"):
        cp.undo("c1")
    assert (ws / "a.txt").stat().st_size == CHECKPOINT_MAX_FILE_BYTES + 1
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "src"]
    monkeypatch.undo()
    assert cp.undo("c1").changes == [("A", "a.txt")]  # the checkpoint was not used up
    assert (ws / "a.txt").read_text() == "alpha\n"


def test_a_nested_repository_is_left_alone(ws: Path, cp: Checkpoints):
    cp.record("c1", "Run git clone")
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "lib.py").write_text("lib\n")
    make_repo(nested)
    (ws / "a.txt").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "a.txt")]
    assert (nested / "lib.py").read_text() == "lib\n" and (nested / ".git").is_dir()


# -- the project's own repository --------------------------------------------------------


def test_the_projects_own_git_is_never_touched_nor_run(ws: Path, tmp_path: Path):
    make_repo(ws)
    marker = booby_trap(ws, tmp_path)
    git_before = files(ws / ".git", skip=())
    cp = Checkpoints(ws)

    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("changed\n")
    (ws / "new.txt").write_text("new\n")
    cp.record("c1", "Run touch")
    (ws / "src" / "b.py").unlink()
    cp.undo("c1")
    cp.undo("c1")

    assert files(ws / ".git", skip=()) == git_before  # HEAD, index, refs, config: all of it
    assert not marker.exists()
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "new.txt").exists()
    tree = shadow_git(cp, "ls-tree", "-r", "--name-only", "refs/undone/c1/1")
    assert not any(part == ".git" for name in tree.split() for part in name.split("/"))


def test_git_variables_inherited_from_a_hook_are_ignored(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    make_repo(ws)
    marker = booby_trap(ws, tmp_path)
    git_before = files(ws / ".git", skip=())
    monkeypatch.setenv("GIT_DIR", str(ws / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(ws / ".git" / "index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(ws / ".git" / "objects"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{tmp_path / 'evil.sh'}'")
    cp = Checkpoints(ws)
    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "a.txt")]
    assert files(ws / ".git", skip=()) == git_before
    assert not marker.exists()


def test_no_git_identity_and_an_empty_home_still_work(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    cp = Checkpoints(ws)
    assert cp.record("c1", "Edit a.txt") == []
    (ws / "a.txt").write_text("changed\n")
    assert cp.undo("c1").changes == [("M", "a.txt")]
    assert list(home.iterdir()) == []


def test_a_workspace_that_is_not_a_repository_stays_one(ws: Path, cp: Checkpoints):
    cp.record("c1", "Edit a.txt")
    (ws / "a.txt").write_text("changed\n")
    cp.undo("c1")
    assert not (ws / ".git").exists()
    assert branch_status(ws) is None


def test_a_failed_record_says_so_and_does_not_raise(ws: Path, tmp_path: Path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    (notice,) = Checkpoints(ws, root=blocked).record("c1", "Edit a.txt")
    assert notice.startswith("No checkpoint was recorded before 'Edit a.txt': ")
    assert notice.endswith("undo cannot go back past this change.")


def test_a_workspace_too_large_to_copy_turns_checkpoints_off(
    ws: Path, cp: Checkpoints, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("agent_cli.git.checkpoints.CHECKPOINT_MAX_NEW_FILES", 1)
    (notice,) = cp.record("c1", "Edit a.txt")
    assert notice.startswith(f"Checkpoints are off for this session: {ws} is too large")
    assert cp.record("c1", "Edit a.txt") == []
    with pytest.raises(NothingToUndo):
        cp.undo("c1")


# -- no git ------------------------------------------------------------------------------


def test_without_git_checkpoints_are_off_with_one_notice(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("GIT_PYTHON_GIT_EXECUTABLE", raising=False)
    assert not checkpoints_available()
    cp = Checkpoints(ws)
    (notice,) = cp.record("c1", "Edit a.txt")
    assert notice.startswith("Checkpoints are off: git is not installed")
    assert cp.record("c1", "Edit a.txt") == []  # said once
    with pytest.raises(CheckpointError, match="git is not installed"):
        cp.undo("c1")
    assert branch_status(ws) is None


# -- branch_status -----------------------------------------------------------------------


def test_branch_status_of_a_clean_then_dirty_repository(ws: Path, tmp_path: Path):
    make_repo(ws)
    assert branch_status(ws) == ("main", False)
    assert branch_status(ws / "src") == ("main", False)  # from a subfolder too
    (ws / "untracked.txt").write_text("u\n")
    assert branch_status(ws) == ("main", True)
    (ws / "untracked.txt").unlink()
    (ws / "a.txt").write_text("changed\n")
    assert branch_status(ws) == ("main", True)
    project_git(ws, "checkout", "-q", "-b", "feature/x")
    assert branch_status(ws) == ("feature/x", True)


def test_branch_status_detached_and_not_a_repository(ws: Path):
    assert branch_status(ws) is None
    assert branch_status(ws / "does-not-exist") is None
    make_repo(ws)
    head = project_git(ws, "rev-parse", "HEAD").strip()
    project_git(ws, "checkout", "-q", "--detach")
    assert branch_status(ws) == (head[:7], False)


def test_branch_status_runs_nothing_the_repository_configures(ws: Path, tmp_path: Path):
    make_repo(ws)
    marker = booby_trap(ws, tmp_path)
    project_git(ws, "add", ".gitattributes")  # staged: the repository is dirty
    assert marker.exists()  # the trap works: our own `git add` above ran it
    marker.unlink()
    later = os.stat(ws / "a.txt").st_mtime + 100
    os.utime(ws / "a.txt", (later, later))  # same size, new time: git compares content
    index_before = (ws / ".git" / "index").read_bytes()
    assert branch_status(ws) == ("main", True)
    assert not marker.exists()
    assert (ws / ".git" / "index").read_bytes() == index_before


def test_branch_status_never_raises(monkeypatch: pytest.MonkeyPatch, ws: Path):
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    make_repo(ws)
    monkeypatch.setattr("agent_cli.git.status.run_git", broken)
    assert branch_status(ws) is None


def test_a_rewind_restores_the_files_to_before_the_first_change_of_its_turns(
    ws: Path, cp: Checkpoints
):
    cp.record("c1", "Edit a.txt", turn="t-one")
    (ws / "a.txt").write_text("one\n")
    cp.record("c1", "Write new.txt", turn="t-two")
    (ws / "new.txt").write_text("new\n")
    cp.record("c1", "Edit a.txt\nagain", turn="t-two")
    (ws / "a.txt").write_text("two\n")
    cp.record("c1", "Edit src/b.py", turn="t-three")
    (ws / "src" / "b.py").write_text("changed\n")
    assert cp.first_change("c1", {"t-two", "t-three"}) == "Write new.txt"
    assert cp.first_change("c1", {"t-none"}) is None and cp.first_change("c2", {"t-two"}) is None

    restored = cp.restore_before("c1", {"t-two", "t-three"})

    assert restored == Restored(
        "Write new.txt", [("M", "a.txt"), ("D", "new.txt"), ("M", "src/b.py")]
    )
    assert files(ws) == {"a.txt": b"one\n", "src/b.py": b"print('b')\n"}
    # The rewound turns' checkpoints are gone; undo goes on from the turn before them.
    assert cp.first_change("c1", {"t-two", "t-three"}) is None
    assert cp.undo("c1").label == "Edit a.txt"
    assert files(ws) == {"a.txt": b"alpha\n", "src/b.py": b"print('b')\n"}


def test_a_rewind_with_no_change_after_the_message_has_nothing_to_restore(
    ws: Path, cp: Checkpoints
):
    cp.record("c1", "Edit a.txt", turn="t-one")
    (ws / "a.txt").write_text("one\n")
    with pytest.raises(NothingToUndo, match="nothing to restore"):
        cp.restore_before("c1", {"t-two"})
    assert (ws / "a.txt").read_text() == "one\n"


def test_a_fork_gets_the_checkpoints_and_undoes_on_its_own(ws: Path, cp: Checkpoints):
    cp.record("c1", "Edit a.txt", turn="t-one")
    (ws / "a.txt").write_text("one\n")
    cp.copy("c1", "fork")
    assert cp.first_change("fork", {"t-one"}) == "Edit a.txt"

    assert cp.undo("fork").label == "Edit a.txt"
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert cp.first_change("c1", {"t-one"}) == "Edit a.txt", "the original keeps its own"
