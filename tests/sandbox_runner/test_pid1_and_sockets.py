"""Issue 25, sandbox: the environment cannot take over the sandbox's pid 1 to run unfiltered
code, every process of the sandbox is filtered, sockets of families that escape the network
namespace (AF_VSOCK...) are refused, and the sandbox has its own hostname - on every backend."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from sandbox_runner import open_sandbox
from tests.sandbox_runner import hostile
from tests.sandbox_runner.conftest import TEST_LIMITS

pytestmark = pytest.mark.timeout(120)
# Forking dozens of Python processes takes a while on a loaded machine.
LIMITS = replace(TEST_LIMITS, call_timeout=30.0)

# The reviewer's attack: read pid 1's program counter from /proc/1/syscall, write code there
# through /proc/1/mem (opened read-write), then let an orphan exit so pid 1 returns from its
# wait into that code. The code execs Python as pid 1, which reports its own seccomp mode and
# tries io_uring_setup. The observation says how far the attack got.
PID1_TAKEOVER = r'''
import struct

REPORT = "/tmp/pid1-report"
PAYLOAD = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
with open("/proc/self/status") as status:
    mode = [line.split()[1] for line in status if line.startswith("Seccomp:")][0]
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 1, params)
outcome = "ok" if fd >= 0 else "errno %d" % ctypes.get_errno()
with open("/tmp/pid1-report.part", "w") as report:
    report.write("payload ran as pid %d with Seccomp: %s; io_uring_setup %s"
                 % (os.getpid(), mode, outcome))
os.rename("/tmp/pid1-report.part", "/tmp/pid1-report")
import time
time.sleep(60)  # pid 1 exiting would end the sandbox before the report is read
"""


def seccomp_modes():
    """Seccomp mode of every process the sandbox can see, by pid."""
    modes = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/status" % name) as status:
                    for line in status:
                        if line.startswith("Seccomp:"):
                            modes[int(name)] = line.split()[1]
            except OSError:
                pass
    return modes


def execve_code(address, argv):
    """x86_64 code placed at `address`: execve(argv[0], argv, NULL), then exit."""
    code_size = 40
    strings, offsets = b"", []
    for argument in argv:
        offsets.append(address + code_size + len(strings))
        strings += argument.encode() + b"\0"
    argv_address = address + code_size + len(strings)
    code = (b"\x48\xbf" + struct.pack("<Q", offsets[0])        # movabs rdi, path
            + b"\x48\xbe" + struct.pack("<Q", argv_address)    # movabs rsi, argv
            + b"\x31\xd2"                                      # xor edx, edx
            + b"\xb8\x3b\x00\x00\x00\x0f\x05"                  # execve
            + b"\xb8\x3c\x00\x00\x00\x0f\x05")                 # exit
    code = code.ljust(code_size, b"\x90")
    return code + strings + struct.pack("<%dQ" % (len(argv) + 1), *offsets, 0)


results = ["pid 1 Seccomp: %s" % seccomp_modes().get(1, "?")]
unfiltered = sorted(pid for pid, mode in seccomp_modes().items() if mode != "2")
results.append("unfiltered pids: %s" % unfiltered)
counter = None
try:
    with open("/proc/1/syscall") as syscall:
        counter = int(syscall.read().split()[-1], 16)
    results.append("read pid 1's program counter")
except (OSError, ValueError, IndexError) as error:
    results.append("syscall read failed: %s" % error)
try:
    memory = os.open("/proc/1/mem", os.O_RDWR)
    results.append("opened /proc/1/mem read-write")
except OSError as error:
    memory = None
    results.append("mem open failed: errno %d" % error.errno)
if memory is not None and counter is not None:
    with open("/tmp/payload.py", "w") as payload:
        payload.write(PAYLOAD.replace("\n        ", "\n"))
    try:
        os.pwrite(memory, execve_code(counter, [sys.executable, "-S", "-I", "/tmp/payload.py"]),
                  counter)
        results.append("wrote code at pid 1's program counter")
    except OSError as error:
        results.append("mem write failed: errno %d" % error.errno)
    child = os.fork()
    if child == 0:  # its child becomes an orphan; its exit wakes pid 1
        if os.fork() == 0:
            time.sleep(0.1)
        os._exit(0)
    os.waitpid(child, 0)
    deadline = time.monotonic() + 5
    while not os.path.exists(REPORT) and time.monotonic() < deadline:
        time.sleep(0.02)
    if os.path.exists(REPORT):
        with open(REPORT) as report:
            results.append(report.read())
    else:
        results.append("no report from pid 1")
return {"observation": " | ".join(results), "done": False, "success": False}
'''

SOCKET_FAMILIES = r'''
import errno
results = []
for name in ("AF_VSOCK", "AF_PACKET", "AF_NETLINK", "AF_ALG", "AF_BLUETOOTH", "AF_CAN"):
    family = getattr(socket, name, None)
    if family is None:
        continue
    try:
        socket.socket(family, socket.SOCK_DGRAM if name != "AF_ALG" else socket.SOCK_SEQPACKET
                      ).close()
        results.append("%s created" % name)
    except OSError as error:
        results.append("%s refused: %s" % (name, errno.errorcode.get(error.errno, error.errno)))
left, right = socket.socketpair()
left.sendall(b"unix works")
results.append(right.recv(64).decode())
with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    results.append("inet works on port %d" % bool(server.getsockname()[1]))
results.append("hostname %s" % socket.gethostname())
return {"observation": " | ".join(results), "done": False, "success": False}
'''


ORPHANS = r'''
import subprocess
for _ in range(40):  # more than the sandbox's process limit (32)
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.waitpid(child, 0)


def zombies():
    count = 0
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % name) as stat:
                count += stat.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (OSError, IndexError):
            pass
    return count


deadline = time.monotonic() + 5
while zombies() and time.monotonic() < deadline:
    time.sleep(0.02)
own = subprocess.run([sys.executable, "-S", "-c", "raise SystemExit(3)"]).returncode
return {"observation": "zombies %d, own child exited %d" % (zombies(), own),
        "done": False, "success": False}
'''


def step_observation(backend: str, step_body: str) -> str:
    with open_sandbox(hostile.environment(step=step_body), limits=LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        return sandbox.step("go").observation


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the attack's code is x86_64")
def test_pid_1_cannot_be_taken_over_to_run_unfiltered_code(backend):
    observation = step_observation(backend, PID1_TAKEOVER)
    # Every process of the sandbox is filtered, pid 1 first; none can write another's memory.
    assert "pid 1 Seccomp: 2" in observation, observation
    assert "unfiltered pids: []" in observation, observation
    assert "mem open failed: errno" in observation, observation
    assert "Seccomp: 0" not in observation and "io_uring_setup ok" not in observation


def test_pid_1_reaps_orphans_and_leaves_the_environments_children_alone(backend):
    observation = step_observation(backend, ORPHANS)
    assert observation == "zombies 0, own child exited 3"


def test_sockets_that_escape_the_network_namespace_are_refused(backend):
    observation = step_observation(backend, SOCKET_FAMILIES)
    assert "AF_VSOCK refused: EAFNOSUPPORT" in observation, observation
    assert "created" not in observation, observation
    assert "unix works" in observation and "inet works on port 1" in observation
    assert "hostname sandbox" in observation, observation
    assert os.uname().nodename != "sandbox"
