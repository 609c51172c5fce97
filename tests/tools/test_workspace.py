"""Adversarial tests for the workspace boundary: every way a path could get out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cli.tools import workspace as workspace_module
from agent_cli.tools.workspace import MAX_SYMLINKS, OutsideWorkspace, Workspace


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("secret")
    (out / "sub").mkdir()
    return out


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("b")
    (ws / "sub" / "deep").mkdir()
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]")
    (ws / ".git" / "hooks").mkdir()
    return ws.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def refused(ws: Workspace, path: str | os.PathLike[str], *, write: bool = False) -> str:
    with pytest.raises(OutsideWorkspace) as info:
        ws.resolve(path, write=write)
    return str(info.value)


# --- plain paths -----------------------------------------------------------------------


def test_relative_file_resolves_to_absolute_real_path(ws: Workspace, root: Path) -> None:
    result = ws.resolve("a.txt")
    assert isinstance(result, Path)
    assert result.is_absolute()
    assert result == root / "a.txt"


def test_nested_relative_path_resolves(ws: Workspace, root: Path) -> None:
    assert ws.resolve("sub/b.txt") == root / "sub" / "b.txt"


@pytest.mark.parametrize("path", ["", ".", "./", ".//.", "sub/..", "sub/deep/../.."])
def test_empty_and_dot_spellings_resolve_to_root(ws: Workspace, root: Path, path: str) -> None:
    assert ws.resolve(path) == root


def test_root_given_by_absolute_path_is_root(ws: Workspace, root: Path) -> None:
    assert ws.resolve(str(root)) == root
    assert ws.resolve(str(root) + "/") == root


def test_absolute_path_inside_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve(str(root / "sub" / "b.txt")) == root / "sub" / "b.txt"


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "/tmp", "//etc/passwd"])
def test_absolute_path_outside_is_refused(ws: Workspace, path: str) -> None:
    refused(ws, path)


def test_absolute_path_to_outside_secret_is_refused(ws: Workspace, outside: Path) -> None:
    refused(ws, str(outside / "secret.txt"))
    refused(ws, str(outside / "secret.txt"), write=True)


@pytest.mark.parametrize(
    "path",
    ["..", "../", "../outside/secret.txt", "sub/../../outside", "sub/deep/../../../x", "a/../.."],
)
def test_dotdot_escape_is_refused(ws: Workspace, path: str) -> None:
    refused(ws, path)
    refused(ws, path, write=True)


def test_many_dotdots_past_filesystem_root_are_refused(ws: Workspace) -> None:
    refused(ws, "../" * 50 + "etc/passwd")


def test_dotdot_staying_inside_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve("sub/deep/../b.txt") == root / "sub" / "b.txt"


def test_leaving_and_reentering_root_by_name_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve(f"../{root.name}/a.txt") == root / "a.txt"
    assert ws.resolve(f"sub/../../{root.name}/sub/b.txt", write=True) == root / "sub" / "b.txt"


def test_absolute_path_leaving_and_reentering_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve(f"/etc/../{root}/a.txt") == root / "a.txt"


def test_sibling_sharing_the_root_name_as_prefix_is_refused(ws: Workspace, root: Path) -> None:
    sibling = root.parent / (root.name + "2")
    sibling.mkdir()
    (sibling / "x").write_text("x")
    refused(ws, str(sibling / "x"))
    refused(ws, f"../{sibling.name}/x")
    refused(ws, f"../{root.name}2/new.txt", write=True)


@pytest.mark.parametrize("name", ["..foo", "...", "foo..", ".. ", "..a/..b"])
def test_names_that_merely_start_with_dots_are_legal(ws: Workspace, root: Path, name: str) -> None:
    assert ws.resolve(name, write=True) == root / name


def test_trailing_slash_on_directory_is_fine(ws: Workspace, root: Path) -> None:
    assert ws.resolve("sub/") == root / "sub"
    assert ws.resolve("sub///") == root / "sub"


def test_repeated_slashes_and_dots_collapse(ws: Workspace, root: Path) -> None:
    assert ws.resolve(".//sub/./deep//..///b.txt") == root / "sub" / "b.txt"


def test_pathlike_input_is_accepted(ws: Workspace, root: Path) -> None:
    assert ws.resolve(Path("sub") / "b.txt") == root / "sub" / "b.txt"
    assert ws.resolve(root / "a.txt") == root / "a.txt"
    refused(ws, Path("..") / "outside")


def test_bytes_input_is_decoded(ws: Workspace, root: Path) -> None:
    assert ws.resolve(b"a.txt") == root / "a.txt"  # type: ignore[arg-type]
    refused(ws, b"../outside")  # type: ignore[arg-type]


# --- paths that do not exist yet --------------------------------------------------------


def test_nonexistent_path_returns_would_be_path_for_read(ws: Workspace, root: Path) -> None:
    assert ws.resolve("nope.txt") == root / "nope.txt"


def test_nonexistent_nested_path_is_allowed_for_write(ws: Workspace, root: Path) -> None:
    assert ws.resolve("new/dir/file.py", write=True) == root / "new" / "dir" / "file.py"


def test_nonexistent_tail_with_dotdot_escape_is_refused(ws: Workspace) -> None:
    refused(ws, "missing/../../outside/secret.txt")
    refused(ws, "missing/deeper/../../../x", write=True)


def test_nonexistent_tail_with_dotdot_staying_inside_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve("missing/../a.txt") == root / "a.txt"
    assert ws.resolve("m1/m2/../m3", write=True) == root / "m1" / "m3"


def test_nonexistent_tail_dotdot_then_outward_link_is_refused(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "out").symlink_to(outside)
    refused(ws, "missing/../out/secret.txt")
    refused(ws, "missing/../out/new.txt", write=True)


def test_child_of_a_regular_file_is_not_an_escape(ws: Workspace, root: Path) -> None:
    assert ws.resolve("a.txt/x") == root / "a.txt" / "x"
    refused(ws, "a.txt/x/../../..")


# --- tilde --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["~", "~/", "~/.ssh/id_rsa", "~root", "~root/.bashrc", "~x/../a"])
def test_tilde_prefixes_are_refused(ws: Workspace, path: str) -> None:
    message = refused(ws, path)
    assert "~" in message
    refused(ws, path, write=True)


def test_tilde_is_refused_even_when_home_is_the_workspace(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(root))
    refused(ws, "~/a.txt")


def test_tilde_is_never_expanded_elsewhere(ws: Workspace, root: Path) -> None:
    assert ws.resolve("sub/~/x") == root / "sub" / "~" / "x"
    assert ws.resolve("backup~") == root / "backup~"
    assert ws.resolve("./~") == root / "~"


# --- malformed strings ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["\0", "a.txt\0", "\0/etc/passwd", "sub/\0/../x", "../\0"])
def test_nul_byte_is_refused(ws: Workspace, path: str) -> None:
    assert "NUL" in refused(ws, path)
    refused(ws, path, write=True)


def test_unencodable_string_is_refused_not_leaked_as_unicode_error(ws: Workspace) -> None:
    with pytest.raises(OutsideWorkspace):
        ws.resolve("bad\ud800name")


def test_non_path_argument_is_a_type_error(ws: Workspace) -> None:
    with pytest.raises(TypeError):
        ws.resolve(42)  # type: ignore[arg-type]


# --- symbolic links --------------------------------------------------------------------------


def test_symlink_to_file_inside_resolves_to_target(ws: Workspace, root: Path) -> None:
    (root / "ln").symlink_to("sub/b.txt")
    assert ws.resolve("ln") == root / "sub" / "b.txt"
    assert ws.resolve("ln", write=True) == root / "sub" / "b.txt"


def test_symlink_to_directory_inside_resolves_through(ws: Workspace, root: Path) -> None:
    (root / "d").symlink_to(root / "sub" / "deep", target_is_directory=True)
    assert ws.resolve("d/new.txt", write=True) == root / "sub" / "deep" / "new.txt"


def test_symlink_to_outside_file_is_refused(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "ln").symlink_to(outside / "secret.txt")
    assert "symbolic link" in refused(ws, "ln")
    refused(ws, "ln", write=True)


def test_symlink_to_outside_directory_is_refused(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "out").symlink_to(outside, target_is_directory=True)
    refused(ws, "out")
    refused(ws, "out/secret.txt")
    refused(ws, "out/new.txt", write=True)
    refused(ws, "out/sub/deeper/new.txt", write=True)


def test_intermediate_symlink_pointing_outside_is_refused(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "sub" / "deep" / "esc").symlink_to(outside)
    refused(ws, "sub/deep/esc/secret.txt")
    refused(ws, str(root / "sub" / "deep" / "esc" / "x"), write=True)


def test_relative_symlink_escaping_with_dotdot_is_refused(ws: Workspace, root: Path) -> None:
    (root / "sub" / "up").symlink_to("../../outside")
    refused(ws, "sub/up/secret.txt")


def test_dotdot_after_a_link_uses_the_physical_parent(
    ws: Workspace, root: Path, outside: Path
) -> None:
    # Lexically "ln/../a.txt" is "a.txt", but the kernel goes to the link target's parent.
    (root / "ln").symlink_to(outside / "sub")
    refused(ws, "ln/../secret.txt")
    (root / "deep_ln").symlink_to(root / "sub" / "deep")
    assert ws.resolve("deep_ln/../b.txt") == root / "sub" / "b.txt"


def test_link_to_parent_of_root_is_refused_unless_reentering(ws: Workspace, root: Path) -> None:
    (root / "up").symlink_to("..")
    refused(ws, "up")
    refused(ws, "up/outside/secret.txt")
    assert ws.resolve(f"up/{root.name}/a.txt") == root / "a.txt"


def test_link_to_filesystem_root_is_refused(ws: Workspace, root: Path) -> None:
    (root / "slash").symlink_to("/")
    refused(ws, "slash/etc/passwd")


def test_absolute_link_target_inside_is_allowed(ws: Workspace, root: Path) -> None:
    (root / "abs").symlink_to(root / "a.txt")
    assert ws.resolve("abs") == root / "a.txt"


def test_link_to_root_itself_is_readable_but_not_writable(ws: Workspace, root: Path) -> None:
    (root / "self").symlink_to(".")
    assert ws.resolve("self") == root
    assert ws.resolve("self/self/a.txt") == root / "a.txt"
    refused(ws, "self", write=True)


def test_chain_of_links_ending_inside_is_allowed(ws: Workspace, root: Path) -> None:
    (root / "l3").symlink_to("sub/b.txt")
    (root / "l2").symlink_to("l3")
    (root / "l1").symlink_to("l2")
    assert ws.resolve("l1") == root / "sub" / "b.txt"


def test_chain_of_links_ending_outside_is_refused(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "l2").symlink_to(outside / "secret.txt")
    (root / "l1").symlink_to("l2")
    refused(ws, "l1")
    refused(ws, "l1", write=True)


def test_chain_leaving_and_reentering_is_allowed(ws: Workspace, root: Path, outside: Path) -> None:
    (outside / "back").symlink_to(root / "sub")
    (root / "via").symlink_to(outside / "back")
    assert ws.resolve("via/b.txt") == root / "sub" / "b.txt"


def test_outside_link_in_the_target_of_an_inside_link_is_refused(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "sub" / "esc").symlink_to(outside)
    (root / "ln").symlink_to("sub/esc/secret.txt")
    refused(ws, "ln")


def test_chain_within_the_link_limit_is_allowed(ws: Workspace, root: Path) -> None:
    (root / "c0").symlink_to("a.txt")
    for i in range(1, 10):
        (root / f"c{i}").symlink_to(f"c{i - 1}")
    assert ws.resolve("c9") == root / "a.txt"


def test_chain_longer_than_the_link_limit_is_refused(ws: Workspace, root: Path) -> None:
    (root / "c0").symlink_to("a.txt")
    for i in range(1, MAX_SYMLINKS + 1):
        (root / f"c{i}").symlink_to(f"c{i - 1}")
    refused(ws, f"c{MAX_SYMLINKS}")


def test_self_loop_is_refused_with_a_clear_message(ws: Workspace, root: Path) -> None:
    (root / "loop").symlink_to("loop")
    assert "loop" in refused(ws, "loop")
    refused(ws, "loop/x", write=True)


def test_two_link_loop_is_refused(ws: Workspace, root: Path) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    refused(ws, "a")
    refused(ws, "b/c/d", write=True)


def test_growing_loop_is_refused_not_recursion_error(ws: Workspace, root: Path) -> None:
    (root / "grow").symlink_to("grow/grow/grow")
    with pytest.raises(OutsideWorkspace) as info:
        ws.resolve("grow/x")
    assert not isinstance(info.value, RecursionError | OSError)


def test_loop_through_parent_directories_is_refused(ws: Workspace, root: Path) -> None:
    (root / "sub" / "deep" / "back").symlink_to("../../sub/deep/back")
    refused(ws, "sub/deep/back")


def test_dangling_link_is_refused_for_read(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "dang").symlink_to(outside / "nope.txt")
    assert "dangling" in refused(ws, "dang")


def test_dangling_link_is_refused_for_write(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "dang").symlink_to(outside / "created_by_agent.sh")
    refused(ws, "dang", write=True)
    assert not (outside / "created_by_agent.sh").exists()


def test_dangling_link_with_target_inside_is_still_refused(ws: Workspace, root: Path) -> None:
    (root / "dang").symlink_to("not_yet.txt")
    refused(ws, "dang")
    refused(ws, "dang", write=True)


def test_dangling_link_as_intermediate_component_is_refused(ws: Workspace, root: Path) -> None:
    (root / "dang").symlink_to("missing_dir")
    refused(ws, "dang/x", write=True)
    refused(ws, "dang/../a.txt")


def test_chain_ending_in_a_dangling_link_is_refused(ws: Workspace, root: Path) -> None:
    (root / "d2").symlink_to("gone")
    (root / "d1").symlink_to("d2")
    refused(ws, "d1", write=True)


def test_link_whose_target_goes_through_a_file_is_dangling(ws: Workspace, root: Path) -> None:
    (root / "odd").symlink_to("a.txt/inner")
    refused(ws, "odd")


def test_link_target_missing_then_dotdot_is_dangling(ws: Workspace, root: Path) -> None:
    # The kernel fails "missing/.." with ENOENT, so this link does not point at the root.
    (root / "trick").symlink_to("missing/../a.txt")
    refused(ws, "trick")


def test_unreadable_directory_is_refused_not_leaked_as_oserror(ws: Workspace, root: Path) -> None:
    locked = root / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    locked.chmod(0)
    try:
        if os.access(locked, os.X_OK):
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(OutsideWorkspace):
            ws.resolve("locked/inner/x")
    finally:
        locked.chmod(0o755)


def test_permission_error_while_checking_is_refused_not_leaked(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = os.lstat

    def denying_lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if path.endswith("/sub"):
            raise PermissionError(13, "Permission denied", path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace_module.os, "lstat", denying_lstat)
    assert "Permission denied" in refused(ws, "sub/b.txt")


def test_readlink_failure_is_refused_not_leaked(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "ln").symlink_to("a.txt")

    def failing_readlink(path: str) -> str:
        raise OSError(5, "Input/output error", path)

    monkeypatch.setattr(workspace_module.os, "readlink", failing_readlink)
    refused(ws, "ln")


def test_dangling_message_names_the_link_relative_to_the_root(ws: Workspace, root: Path) -> None:
    (root / "sub" / "dang").symlink_to("/nonexistent/target")
    message = refused(ws, "sub/dang", write=True)
    assert "dangling symbolic link sub/dang," in message


def test_escape_through_link_message_says_so(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "out").symlink_to(outside)
    message = refused(ws, "out/secret.txt")
    assert "outside the workspace" in message
    assert "symbolic link" in message
    assert str(outside / "secret.txt") in message


# --- the workspace root -----------------------------------------------------------------------


def test_root_attribute_is_the_real_path(tmp_path: Path, root: Path) -> None:
    link = tmp_path / "link_to_ws"
    link.symlink_to(root, target_is_directory=True)
    assert Workspace(link).root == root
    assert Workspace(str(link) + "/").root == root


def test_root_reached_through_a_link_accepts_the_unresolved_spelling(
    tmp_path: Path, root: Path
) -> None:
    link = tmp_path / "link_to_ws"
    link.symlink_to(root, target_is_directory=True)
    ws = Workspace(link)
    assert ws.resolve(str(link / "a.txt")) == root / "a.txt"
    assert ws.resolve(str(link / "new.txt"), write=True) == root / "new.txt"
    assert ws.resolve(str(link)) == root
    assert ws.resolve("a.txt") == root / "a.txt"
    refused(ws, str(link / ".." / "outside" / "secret.txt"))


def test_relative_root_is_made_absolute(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ws = Workspace("ws")
    assert ws.root == root
    assert ws.resolve("a.txt") == root / "a.txt"


def test_resolution_does_not_depend_on_the_current_directory(
    ws: Workspace, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(outside)
    assert ws.resolve("a.txt") == root / "a.txt"
    assert ws.resolve("secret.txt") == root / "secret.txt"


def test_missing_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Workspace(tmp_path / "nope")


def test_file_as_root_is_an_error(root: Path) -> None:
    with pytest.raises(NotADirectoryError):
        Workspace(root / "a.txt")


def test_filesystem_root_as_workspace_allows_every_absolute_path() -> None:
    ws = Workspace("/")
    assert ws.root == Path("/")
    assert ws.resolve("/etc") == Path(os.path.realpath("/etc"))
    assert ws.resolve("../../..") == Path("/")
    assert ws.relative(Path("/")) == "."
    refused(ws, "/", write=True)
    refused(ws, "~")


# --- write-only rules -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", ".", "./", "sub/.."])
def test_writing_the_root_itself_is_refused(ws: Workspace, root: Path, path: str) -> None:
    assert "root" in refused(ws, path, write=True)
    refused(ws, str(root), write=True)


@pytest.mark.parametrize(
    "path",
    [
        ".git",
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/new/dir/file",
        "sub/.git/config",
        "vendor/lib/.git/hooks/post-checkout",
        "sub/../.git/config",
        "missing/../.git/hooks/x",
        "./.git/./config",
    ],
)
def test_writing_inside_dotgit_at_any_depth_is_refused(ws: Workspace, path: str) -> None:
    assert ".git" in refused(ws, path, write=True)


def test_writing_dotgit_by_absolute_path_is_refused(ws: Workspace, root: Path) -> None:
    refused(ws, str(root / ".git" / "config"), write=True)


@pytest.mark.parametrize("path", [".GIT/config", ".Git/hooks/x", ".g\u200cit/config", ".git\ufeff"])
def test_writing_dotgit_spelled_as_macos_sees_it_is_refused(ws: Workspace, path: str) -> None:
    refused(ws, path, write=True)


def test_writing_dotgit_through_a_symlink_is_refused(ws: Workspace, root: Path) -> None:
    (root / "innocent").symlink_to(".git")
    (root / "hook").symlink_to(".git/hooks/pre-commit")
    refused(ws, "innocent/config", write=True)
    refused(ws, "hook", write=True)


def test_writing_a_dotgit_file_of_a_submodule_is_refused(ws: Workspace, root: Path) -> None:
    (root / "sub" / ".git").write_text("gitdir: ../.git/modules/sub")
    refused(ws, "sub/.git", write=True)


def test_writing_through_a_dotgit_link_to_an_innocent_folder_is_refused(
    ws: Workspace, root: Path
) -> None:
    # git treats the target of a ".git" link as the git folder, whatever its own name.
    (root / "gitdata" / "hooks").mkdir(parents=True)
    (root / "sub" / ".git").symlink_to("../gitdata")
    refused(ws, "sub/.git/hooks/pre-commit", write=True)
    refused(ws, "sub/.git", write=True)
    assert ws.resolve("sub/.git/hooks/pre-commit") == root / "gitdata" / "hooks" / "pre-commit"


def test_dotgit_link_does_not_taint_paths_that_only_pass_through_it(
    ws: Workspace, root: Path
) -> None:
    (root / "gitdata").mkdir()
    (root / "sub" / ".git").symlink_to("../gitdata")
    assert ws.resolve("sub/.git/../a.txt", write=True) == root / "a.txt"


def test_reading_inside_dotgit_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.resolve(".git/config") == root / ".git" / "config"


@pytest.mark.parametrize(
    "path",
    [".gitignore", ".gitattributes", ".github/workflows/ci.yml", "git/x", ".git2/x", "x.git"],
)
def test_names_merely_resembling_dotgit_are_writable(ws: Workspace, root: Path, path: str) -> None:
    assert ws.resolve(path, write=True) == root / path


def test_write_is_positional_too(ws: Workspace) -> None:
    with pytest.raises(OutsideWorkspace):
        ws.resolve(".git/config", True)


# --- messages and helpers ---------------------------------------------------------------------


def test_outside_workspace_is_a_value_error() -> None:
    assert issubclass(OutsideWorkspace, ValueError)


def test_outside_message_names_the_path_and_the_root(ws: Workspace, root: Path) -> None:
    message = refused(ws, "../etc/passwd")
    assert message == f"'../etc/passwd' is outside the workspace {root}; use a path inside it."


@pytest.mark.parametrize("path", ["../x", "~/x", "a\0b", "/etc", ".git/x", "", "loop"])
def test_messages_are_a_single_line_naming_the_path(ws: Workspace, root: Path, path: str) -> None:
    (root / "loop").symlink_to("loop")
    with pytest.raises(OutsideWorkspace) as info:
        ws.resolve(path, write=True)
    message = str(info.value)
    assert "\n" not in message
    assert message.endswith(".")
    assert repr(path) in message
    assert info.value.path == path


def test_relative_of_root_is_dot(ws: Workspace, root: Path) -> None:
    assert ws.relative(root) == "."
    assert ws.relative(ws.resolve("")) == "."


def test_relative_is_posix_form(ws: Workspace, root: Path) -> None:
    assert ws.relative(ws.resolve("sub/deep/../b.txt")) == "sub/b.txt"
    assert ws.relative(root / "new" / "x.py") == "new/x.py"


def test_relative_of_outside_path_is_refused(ws: Workspace, root: Path, outside: Path) -> None:
    with pytest.raises(OutsideWorkspace):
        ws.relative(outside / "secret.txt")
    with pytest.raises(OutsideWorkspace):
        ws.relative(Path(str(root) + "2") / "x")
    with pytest.raises(OutsideWorkspace):
        ws.relative(root / ".." / "outside")
    with pytest.raises(OutsideWorkspace):
        ws.relative(Path("a.txt"))


def test_resolving_is_proportional_to_the_path_not_the_tree(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(300):
        (root / f"f{i}").write_text("")
    calls: list[str] = []
    real_lstat = os.lstat

    def counting_lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace_module.os, "lstat", counting_lstat)
    monkeypatch.setattr(workspace_module.os, "scandir", None)
    monkeypatch.setattr(workspace_module.os, "listdir", None)
    ws.resolve("sub/deep/f.txt", write=True)
    assert len(calls) <= 3


# --- differential check against the kernel ----------------------------------------------------


_PARTS = ["..", ".", "", "a.txt", "sub", "deep", "in", "out", "up", "loop", "dang", "new", ".git"]


@pytest.fixture
def maze(root: Path, outside: Path) -> Workspace:
    (root / "in").symlink_to("sub")
    (root / "sub" / "out").symlink_to(outside)
    (root / "up").symlink_to("..")
    (root / "loop").symlink_to("loop")
    (root / "dang").symlink_to("nowhere")
    (outside / "in").symlink_to(root / "sub")
    return Workspace(root)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PARTS), max_size=8), st.booleans(), st.booleans())
def test_resolution_agrees_with_the_kernel(
    maze: Workspace, parts: list[str], absolute: bool, write: bool
) -> None:
    path = "/".join(parts)
    if absolute:
        path = f"{maze.root}/{path}"
    kernel_path = os.path.join(maze.root, path)
    try:
        result = maze.resolve(path, write=write)
    except OutsideWorkspace:
        # Refusals must be justified: the kernel's real path is outside, or it's broken.
        if os.path.exists(kernel_path):
            real = os.path.realpath(kernel_path)
            inside = real == str(maze.root) or real.startswith(f"{maze.root}/")
            assert not inside or write, (path, real)
        return
    root = str(maze.root)
    assert str(result) == root or str(result).startswith(root + "/")
    assert os.path.isabs(result)
    if os.path.lexists(kernel_path):
        # Whatever exists, the kernel opens exactly what we returned.
        assert os.path.realpath(kernel_path) == str(result), path
        assert os.path.exists(result)
