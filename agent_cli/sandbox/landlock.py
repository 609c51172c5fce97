"""The fallback with no dependency: Landlock and seccomp through raw syscalls (ctypes).

The parent builds a Landlock ruleset from the plan (read everywhere but the
secret stores, write only the workspace, the writable folders and a private
temporary folder; no TCP; no signals or abstract sockets out of the domain).
The child, after fork and before exec, runs `Child.__call__`: no new
privileges; new pid, network and IPC namespaces when the kernel lets it
(through a user namespace when not root) so nothing outlives the command; the
capabilities dropped; the ruleset applied; the seccomp filter loaded. A step
that must not be skipped raises, and then nothing runs.

Landlock cannot keep one file of a writable folder read-only, so the protected
paths inside the workspace are guarded instead (`guard.py`).

Nothing imported or allocated lazily runs in the child: everything it calls is
looked up here, in the parent, because a forked child of a threaded process
must not take Python's import lock.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from agent_cli.sandbox.plan import Plan, inside
from agent_cli.sandbox.seccomp import host_arch

_SYS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE = 1 << 12, 1 << 13, 1 << 14
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_READ = EXECUTE | READ_FILE | READ_DIR
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # rights a rule on a file may carry
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _PR_CAPBSET_DROP, _PR_SET_PDEATHSIG = 38, 22, 24, 1
_SECCOMP_MODE_FILTER = 2
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_SIOCSIFFLAGS, _IFF_UP_LOOPBACK_RUNNING = 0x8914, 0x1 | 0x8 | 0x40
_CAP_VERSION_3 = 0x20080522
_LAST_CAP = 63


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscalls() -> tuple[int, int, int] | None:
    return _SYS.get(host_arch())


@cache
def abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none."""
    numbers = _syscalls()
    if numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(0, int(version))


def _handled_fs(version: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE … MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights  # IOCTL_DEV (ABI 5) is left alone: terminals need their ioctls


def _grants(root: Path, hidden: Iterable[Path]) -> list[Path]:
    """Paths that together cover everything under `root` except `hidden` (Landlock only
    adds rights, so a hidden folder is left out by granting each of its siblings)."""
    holes = [h for h in hidden if inside(h, root)]
    if not holes:
        return [root]
    if root in holes:
        return []
    found: list[Path] = []
    try:
        children = list(os.scandir(root))
    except OSError:
        return []
    for entry in children:
        if entry.is_symlink():
            continue  # its target is granted, or not, where it lies
        found += _grants(Path(entry.path), holes)
    return found


class Ruleset:
    """A Landlock ruleset file descriptor, built in the parent (close-on-exec, as the
    kernel makes it), kept for as long as commands with its plan may run."""

    def __init__(self, plan: Plan, version: int) -> None:
        numbers = _syscalls()
        assert numbers is not None and version > 0
        self._libc = _libc()
        self._add = numbers[1]
        self.version = version
        self.handled = _handled_fs(version)
        net = 0 if plan.network or version < 4 else _NET_BIND_TCP | _NET_CONNECT_TCP
        scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if version >= 6 else 0
        size = 24 if version >= 6 else 16 if version >= 4 else 8
        attr = struct.pack("<QQQ", self.handled, net, scoped)[:size]
        buffer = ctypes.create_string_buffer(attr, len(attr))
        fd = self._libc.syscall(numbers[0], buffer, ctypes.c_size_t(size), 0)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        for path in _grants(Path("/"), plan.hidden):
            self._allow(path, _READ)
        writable = [*plan.writable, plan.workspace] if plan.write else []
        if plan.tmp is not None and plan.write:
            writable.append(plan.tmp)
        for folder in writable:
            self._allow(folder, self.handled)
        for device in _DEVICES:
            self._allow(Path(device), READ_FILE | WRITE_FILE)
        if plan.write:
            self._allow(Path("/dev/shm"), self.handled)
        for pts in ("/dev/pts", "/dev/ptmx"):
            self._allow(Path(pts), READ_FILE | WRITE_FILE | READ_DIR)

    def _allow(self, path: Path, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                rights &= _FILE_ONLY
            rights &= self.handled
            if not rights:
                return
            rule = ctypes.create_string_buffer(struct.pack("<Qi", rights, fd), 12)
            if self._libc.syscall(self._add, self.fd, _RULE_PATH_BENEATH, rule, 0) < 0:
                code = ctypes.get_errno()
                if code not in (errno.EINVAL, errno.EBADFD):
                    raise OSError(code, f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)


class Child:
    """What runs in the child between fork and exec (subprocess's `preexec_fn`)."""

    def __init__(self, ruleset: Ruleset, seccomp: bytes | None, network: bool) -> None:
        numbers = _syscalls()
        assert numbers is not None
        self._libc = _libc()
        self._restrict = numbers[2]
        self._ruleset = ruleset  # kept open while this child may be used
        self._network = network
        self._uid, self._gid = os.getuid(), os.getgid()
        self._program = ctypes.create_string_buffer(seccomp or b"", max(1, len(seccomp or b"")))
        # struct sock_fprog { unsigned short len; struct sock_filter *filter; }
        self._fprog = ctypes.create_string_buffer(
            struct.pack("<HxxxxxxQ", len(seccomp or b"") // 8, ctypes.addressof(self._program))
        )
        self._seccomp = seccomp is not None
        self._cap_header = ctypes.create_string_buffer(struct.pack("<Ii", _CAP_VERSION_3, 0))
        self._cap_data = ctypes.create_string_buffer(24)  # two zeroed __user_cap_data_struct
        for name in ("prctl", "unshare", "fork", "capset", "syscall"):
            getattr(self._libc, name)  # looked up now, not in the child

    def __call__(self) -> None:
        libc = self._libc
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if self._namespaces():
            pid = libc.fork()
            if pid < 0:
                raise OSError(ctypes.get_errno(), "fork")
            if pid > 0:
                _stand_in(pid)  # never returns
            libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # the stand-in killed: so is the command
            if not self._network:
                _loopback_up()
        for cap in range(_LAST_CAP + 1):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.capset(self._cap_header, self._cap_data)
        if libc.syscall(self._restrict, self._ruleset.fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        if self._seccomp and libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self._fprog) != 0:
            raise OSError(ctypes.get_errno(), "seccomp")

    def _namespaces(self) -> bool:
        flags = _CLONE_NEWPID | _CLONE_NEWIPC | (0 if self._network else _CLONE_NEWNET)
        if self._uid == 0 and self._libc.unshare(flags) == 0:
            return True
        if self._libc.unshare(flags | _CLONE_NEWUSER) != 0:
            return False
        return (
            _write("/proc/self/setgroups", b"deny")
            and _write("/proc/self/uid_map", b"%d %d 1" % (self._uid, self._uid))
            and _write("/proc/self/gid_map", b"%d %d 1" % (self._gid, self._gid))
        )


def _write(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _loopback_up() -> None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            request = struct.pack("16sH14x", b"lo", _IFF_UP_LOOPBACK_RUNNING)
            fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, request)
    except OSError:
        pass  # without loopback a local server cannot listen; nothing is opened


def _stand_in(pid: int) -> None:
    """The first process of the new pid namespace is the command; this one stays outside,
    in the command's process group, and leaves with its status. Its copies of the
    parent's descriptors are closed so the parent sees `exec` (and the output's end)."""
    os.closerange(3, 65536)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)
