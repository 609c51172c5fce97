"""A seccomp filter for sandboxed commands, as classic BPF bytes (SPEC §14).

A read-only mount does not stop `connect()` to a unix socket the user's
ssh-agent, docker or dbus listens on, so `socket(AF_UNIX, …)` is refused
(`socketpair`, which reaches nothing outside, stays allowed: libuv and asyncio
need it). io_uring is refused too, because its socket and connect operations
never pass through a filtered syscall. With `deny_inet` (the Landlock path
without a network namespace, where Landlock covers TCP only) an IP socket that
is not a stream is refused as well, so UDP cannot carry data out.

The same bytes go to bubblewrap (`--seccomp FD`) and, on the Landlock path, to
`prctl(PR_SET_SECCOMP)` in the child before `exec`. Written by hand because the
program is twenty instructions and libseccomp would be a system dependency.
"""

from __future__ import annotations

import errno
import platform
import struct

# Offsets into struct seccomp_data.
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24
# BPF opcodes.
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

_AF_UNIX, _AF_INET, _AF_INET6, _SOCK_STREAM = 1, 2, 10, 1
_X32_BIT = 0x40000000
_AUDIT_X86_64 = 0xC000003E

# (audit arch, socket, socketcall or None, io_uring setup/enter/register) per ABI.
# Per architecture, per ABI: (audit arch, socket, socketcall or None, io_uring calls).
_ABIS: dict[str, list[tuple[int, int, int | None, tuple[int, ...]]]] = {
    "x86_64": [(_AUDIT_X86_64, 41, None, (425, 426, 427)), (0x40000003, 359, 102, (425, 426, 427))],
    "aarch64": [(0xC00000B7, 198, None, (425, 426, 427)), (0x40000028, 281, None, (425, 426, 427))],
}
_ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def host_arch() -> str:
    machine = platform.machine().lower()
    return _ARCH_ALIASES.get(machine, machine)


def supported(arch: str | None = None) -> bool:
    return (arch or host_arch()) in _ABIS


class _Program:
    """A tiny assembler: jumps name labels, resolved when the program is built."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def op(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def bytes(self) -> bytes:
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):
            offsets = [self._offset(index, j) for j in (jt, jf)]
            out += struct.pack("<HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)

    def _offset(self, index: int, jump: object) -> int:
        if isinstance(jump, int):
            return jump
        offset = self.labels[str(jump)] - index - 1
        assert 0 <= offset < 256, "a seccomp jump out of range"
        return offset


def socket_filter(
    arch: str | None = None, deny_inet: bool = False, deny_tcp: bool = False
) -> bytes:
    """The filter for `arch` (default: this machine's). Raises ValueError where unknown.
    `deny_inet`: IP sockets that are not streams are refused too; with `deny_tcp` (a
    Landlock too old to filter TCP) every IP socket."""
    abis = _ABIS.get(arch or host_arch())
    if abis is None:
        raise ValueError(f"no seccomp filter for the {arch or host_arch()} architecture")
    p = _Program()
    p.op(_LD_W_ABS, _ARCH)
    for index, (audit, _socket, _call, _uring) in enumerate(abis):
        p.op(_JEQ_K, audit, f"abi{index}", 0)
    p.op(_RET_K, _ALLOW)  # an architecture the kernel runs that is not ours: not reachable
    for index, (audit, socket, socketcall, uring) in enumerate(abis):
        p.label(f"abi{index}")
        p.op(_LD_W_ABS, _NR)
        if audit == _AUDIT_X86_64:
            p.op(_JGE_K, _X32_BIT, "eperm", 0)  # the x32 ABI: same numbers, another table
        for number in uring:
            p.op(_JEQ_K, number, "enosys", 0)
        if socketcall is not None:
            p.op(_JEQ_K, socketcall, "eperm", 0)  # its arguments are in memory: unreadable here
        p.op(_JEQ_K, socket, "socket", "allow")
    p.label("socket")
    p.op(_LD_W_ABS, _ARG0)
    p.op(_JEQ_K, _AF_UNIX, "eperm", 0)
    if deny_inet:
        p.op(_JEQ_K, _AF_INET, "inet", 0)
        p.op(_JEQ_K, _AF_INET6, "inet", "allow")
        p.label("inet")
        p.op(_LD_W_ABS, _ARG1)
        p.op(_AND_K, 0xF)  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
        p.op(_JEQ_K, _SOCK_STREAM, "eacces" if deny_tcp else "allow", "eacces")
        p.label("eacces")
        p.op(_RET_K, _ERRNO | errno.EACCES)
    p.label("allow")
    p.op(_RET_K, _ALLOW)
    p.label("eperm")
    p.op(_RET_K, _ERRNO | errno.EPERM)
    p.label("enosys")
    p.op(_RET_K, _ERRNO | errno.ENOSYS)
    return p.bytes()
