"""The guest's seccomp program, run through a small classic-BPF interpreter for both tabled
architectures (only one of them can be tried for real on any machine)."""

from __future__ import annotations

import struct

import pytest

from sandbox_runner.guest import guest_source

ALLOW, KILL, EPERM, ENOSYS = 0x7FFF0000, 0x80000000, 0x00050001, 0x00050026
EAFNOSUPPORT = 0x00050061
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK = 1, 2, 10, 16, 17, 40
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003}
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17


@pytest.fixture(scope="module")
def guest() -> dict:
    """The guest program's functions, without running it."""
    namespace: dict = {"__name__": "envduels_guest_under_test"}
    exec(compile(guest_source(), "envduels_guest.py", "exec"), namespace)
    return namespace


def run_filter(program: bytes, *, arch: str, number: int, args: tuple[int, ...] = ()) -> int:
    """Evaluate a classic BPF seccomp program against one syscall; return its verdict."""
    data = struct.pack("<iIQ6Q", number, AUDIT_ARCH[arch], 0, *(list(args) + [0] * 6)[:6])
    code = [struct.unpack("HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        op, jump_true, jump_false, k = code[pc]
        if op == 0x20:  # ld [k]
            accumulator = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == 0x06:  # ret k
            return k
        else:
            taken = {0x15: accumulator == k, 0x35: accumulator >= k,
                     0x45: bool(accumulator & k)}[op]
            pc += 1 + (jump_true if taken else jump_false)


def numbers(guest: dict, arch: str) -> dict[str, int]:
    column = guest["ARCHITECTURES"][arch][1]
    return {row[0]: row[column] for row in guest["SYSCALL_NUMBERS"]}


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filter_denies_what_it_should_and_allows_the_rest(guest, arch):
    program, table = guest["seccomp_program"](arch), numbers(guest, arch)
    for name in ("unshare", "setns", "mount", "umount2", "pivot_root", "ptrace", "keyctl",
                 "add_key", "request_key", "bpf", "perf_event_open", "kexec_load",
                 "init_module", "finit_module", "open_tree", "io_uring_setup"):
        assert run_filter(program, arch=arch, number=table[name]) == EPERM, name
    assert run_filter(program, arch=arch, number=table["clone3"]) == ENOSYS
    clone = table["clone"]
    assert run_filter(program, arch=arch, number=clone, args=(SIGCHLD,)) == ALLOW  # fork
    assert run_filter(program, arch=arch, number=clone, args=(0x3D0F00,)) == ALLOW  # a thread
    for flags in (CLONE_NEWUSER | SIGCHLD, CLONE_NEWNS, 0x40000000, 0x20000000):
        assert run_filter(program, arch=arch, number=clone, args=(flags,)) == EPERM
    for harmless in (0, 1, 3, 63, 64):  # read/write/close/... on either table
        if harmless not in table.values():
            assert run_filter(program, arch=arch, number=harmless) == ALLOW


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_only_unix_and_ip_sockets_may_be_made(guest, arch):
    program, table = guest["seccomp_program"](arch), numbers(guest, arch)
    for call in ("socket", "socketpair"):
        for family in (AF_UNIX, AF_INET, AF_INET6):
            assert run_filter(program, arch=arch, number=table[call], args=(family, 1)) == ALLOW
        for family in (AF_VSOCK, AF_NETLINK, AF_PACKET, 0, 3, 38, 0x100000001):
            verdict = run_filter(program, arch=arch, number=table[call], args=(family, 1))
            expected = ALLOW if family == 0x100000001 else EAFNOSUPPORT  # the kernel reads an int
            assert verdict == expected, (call, family)
    # The calls after the socket check are still reached.
    assert run_filter(program, arch=arch, number=table["clone3"]) == ENOSYS


def test_the_host_compiles_the_same_filter_for_bwrap(guest):
    from sandbox_runner.guest import seccomp_program

    assert seccomp_program("x86_64") == guest["seccomp_program"]("x86_64")
    assert seccomp_program("aarch64") == guest["seccomp_program"]("aarch64")


def test_calls_under_another_architecture_kill_the_process(guest):
    program = guest["seccomp_program"]("x86_64")
    assert run_filter(program, arch="i386", number=1) == KILL
    assert run_filter(program, arch="aarch64", number=63) == KILL
    assert run_filter(program, arch="x86_64", number=0x40000000 + 272) == EPERM  # x32 unshare


def test_an_untabled_architecture_is_refused(guest):
    with pytest.raises(OSError, match="refusing to run environment code unfiltered"):
        guest["seccomp_program"]("riscv64")


def test_both_tables_name_every_call_once(guest):
    names = [row[0] for row in guest["SYSCALL_NUMBERS"]]
    assert len(names) == len(set(names))
    assert names[-guest["SPECIAL_SYSCALLS"]:] == ["socket", "socketpair", "clone", "clone3"]
    for arch in ("x86_64", "aarch64"):
        assert len(set(numbers(guest, arch).values())) == len(names)
