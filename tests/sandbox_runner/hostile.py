"""Hostile environment sources for the sandbox tests, built from a step (or reset) body."""

from __future__ import annotations

import textwrap

PROTOCOL_FD_FINDER = '''
def protocol_out_fd():
    """Find the guest's private reply pipe: write-only, not the log pipe behind fd 2."""
    import fcntl
    log_target = os.readlink("/proc/self/fd/2")
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        if target != log_target and flags & os.O_ACCMODE == os.O_WRONLY:
            return fd
    raise RuntimeError("no protocol fd found")


def current_request_id():
    frame = sys._getframe()
    while frame is not None:
        if "request_id" in frame.f_locals:
            return frame.f_locals["request_id"]
        frame = frame.f_back
    return "unknown"
'''


def environment(step: str = 'return {"observation": "ok", "done": False, "success": False}',
                reset: str = 'return "ready"', prelude: str = "") -> str:
    """Return a module whose Environment runs `reset` and `step` as the method bodies."""
    return (
        "import os, signal, socket, sys, threading, time\n"
        + PROTOCOL_FD_FINDER
        + textwrap.dedent(prelude)
        + "\n\nclass Environment:\n    max_steps = 10\n\n"
        + "    def reset(self, seed):\n" + textwrap.indent(textwrap.dedent(reset), " " * 8)
        + "\n\n    def step(self, action):\n" + textwrap.indent(textwrap.dedent(step), " " * 8)
        + "\n"
    )


INFINITE_LOOP = "while True:\n    pass\n"
SLEEP_FOREVER = "time.sleep(10**6)\n"
MEMORY_BOMB = '''
hoard = []
while True:
    hoard.append(bytearray(4 * 1024 * 1024))
'''
FORK_BOMB = '''
while True:
    try:
        os.fork()
    except OSError:
        pass
'''
NAMED_FORK_BOMB_IN_BACKGROUND = '''
import ctypes
ctypes.CDLL(None).prctl(15, action.encode(), 0, 0, 0)  # PR_SET_NAME: mark every fork


def bomb():
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)


threading.Thread(target=bomb, daemon=True).start()
return {"observation": "bombing", "done": False, "success": False}
'''
THREAD_BOMB = '''
while True:
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
'''
LOG_FLOOD_STDOUT = '''
chunk = "x" * 65536
for _ in range(16384):  # 1 GiB
    sys.stdout.write(chunk)
    os.write(1, chunk.encode())
'''
LOG_FLOOD_STDERR = '''
chunk = b"e" * 65536
for _ in range(16384):  # 1 GiB
    os.write(2, chunk)
'''
TMP_FLOOD = '''
chunk = b"t" * (1024 * 1024)
with open("/tmp/big", "wb") as big:
    for _ in range(1024):  # 1 GiB
        big.write(chunk)
        big.flush()
'''
MANY_FILES = '''
for index in range(1000000):
    with open("/tmp/f%07d" % index, "w") as small:
        small.write("s" * 100)
'''
HUGE_REPLY_LINE = '''
fd = protocol_out_fd()
chunk = b"z" * (1024 * 1024)
for _ in range(100):  # 100 MB, no newline
    os.write(fd, chunk)
return {"observation": "unreachable", "done": False, "success": False}
'''
INVALID_UTF8_REPLY = '''
os.write(protocol_out_fd(), b'{"id": "' + current_request_id().encode() + b'", "ok": true, '
         b'"observation": "\\xff\\xfe", "done": false, "success": false}\\n')
return {"observation": "real", "done": False, "success": False}
'''
NAN_REPLY = '''
os.write(protocol_out_fd(), b'{"id": "' + current_request_id().encode() + b'", "ok": true, '
         b'"observation": "forged", "done": true, "success": true, "reward": NaN}\\n')
return {"observation": "real", "done": False, "success": False}
'''
FAKE_REPLIES = '''
fake = ('{"id": "%s", "ok": true, "observation": "FAKE", "done": true, "success": true}'
        % current_request_id())
print(fake)
sys.stdout.write(fake + "\\n")
sys.__stdout__.write(fake + "\\n")
os.write(1, (fake + "\\n").encode())
sys.stdout.flush()
return {"observation": "real", "done": False, "success": False}
'''
NETWORK = '''
results = []
try:
    socket.create_connection((action, 80), timeout=2).close()
    results.append("connected by ip")
except OSError as error:
    results.append("ip blocked: %s" % error)
try:
    socket.getaddrinfo("deb.debian.org", 80)
    results.append("resolved name")
except OSError as error:
    results.append("name blocked: %s" % error)
try:
    socket.create_connection(("deb.debian.org", 80), timeout=2).close()
    results.append("connected by name")
except OSError as error:
    results.append("name connect blocked: %s" % error)
return {"observation": " | ".join(results), "done": False, "success": False}
'''
READ_ENVIRONMENT = '''
seen = [repr(dict(os.environ))]
for path in ["/proc/self/environ", "/proc/1/environ"] + [
        "/proc/%s/environ" % pid for pid in os.listdir("/proc") if pid.isdigit()]:
    try:
        with open(path, "rb") as handle:
            seen.append(handle.read().decode("utf-8", "replace"))
    except OSError as error:
        seen.append("%s: %s" % (path, error))
return {"observation": "\\n".join(seen)[:60000], "done": False, "success": False}
'''
READ_HOST_FILES = '''
found = []
for path in action.split(","):
    try:
        if os.path.isdir(path):
            found.append("listed %s: %s" % (path, os.listdir(path)))
        else:
            with open(path, "rb") as handle:
                found.append("read %s: %r" % (path, handle.read(200)))
    except OSError as error:
        found.append("denied %s" % path)
for sock_path in ("/var/run/docker.sock", "/run/docker.sock"):
    client = socket.socket(socket.AF_UNIX)
    try:
        client.connect(sock_path)
        found.append("connected %s" % sock_path)
    except OSError:
        found.append("denied %s" % sock_path)
    finally:
        client.close()
return {"observation": "\\n".join(found)[:60000], "done": False, "success": False}
'''
WRITE_OUTSIDE_TMP = '''
written = []
for path in action.split(","):
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        written.append(path)
    except OSError:
        pass
return {"observation": "written: %s" % written, "done": False, "success": False}
'''
KILL_PARENT = '''
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
return {"observation": "killed parent", "done": False, "success": False}
'''
KILL_EVERYONE = '''
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
return {"observation": "killed -1", "done": False, "success": False}
'''
IGNORE_SIGTERM = '''
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    while True:
        pass
while True:
    pass
'''
CTYPES_SYSTEM = '''
import ctypes
status = ctypes.CDLL(None).system(action.encode())
return {"observation": "status %d" % status, "done": False, "success": False}
'''
SETSID_SURVIVOR = '''
if os.fork() == 0:
    os.setsid()
    os.execv("/bin/sleep", ["sleep", action])
return {"observation": "spawned", "done": False, "success": False}
'''
LEAVE_STATE = '''
previous = os.path.exists("/tmp/state")
with open("/tmp/state", "w") as handle:
    handle.write("secret from the last episode")
return {"observation": "found earlier state: %s" % previous, "done": False, "success": False}
'''
NESTED_NAMESPACES = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
results = []
with open("/proc/self/status") as status:
    results += [line.replace("\\t", " ") for line in status.read().splitlines()
                if line.startswith(("Seccomp:", "NoNewPrivs:"))]
for name, flags in (("user", 0x10000000), ("user+mount", 0x10020000), ("mount", 0x00020000)):
    if libc.unshare(flags) == 0:
        results.append("unshare %s succeeded" % name)
    else:
        results.append("unshare %s failed: errno %d" % (name, ctypes.get_errno()))
if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
    results.append("mount succeeded")
else:
    results.append("mount failed: errno %d" % ctypes.get_errno())
return {"observation": " | ".join(results), "done": False, "success": False}
'''
FORGE_LOAD_REPLY = '''
import json


def forge_load_reply(**fields):
    """Answer the guest's `load` request ourselves and swallow the guest's genuine reply."""
    frame = sys._getframe()
    while "request_id" not in frame.f_locals:
        frame = frame.f_back
    guest_globals = frame.f_globals
    genuine_write_all = guest_globals["write_all"]

    def swallow_once(fd, data):
        guest_globals["write_all"] = genuine_write_all

    guest_globals["write_all"] = swallow_once
    reply = {"ok": True, "id": frame.f_locals["request_id"], "has_reference": False}
    reply.update(fields)
    os.write(protocol_out_fd(), (json.dumps(reply) + "\\n").encode())
'''


def forged_load(**fields) -> str:
    """An environment (max_steps 10) whose module code forges the load reply with `fields`."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in fields.items())
    return environment(prelude=FORGE_LOAD_REPLY + f"\n\nforge_load_reply({arguments})\n")


FORK_CHILDREN_HOLDING_MEMORY = '''
children = []
for _ in range(6):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            hoard = bytearray(200 * 1024 * 1024)
            for offset in range(0, len(hoard), 4096):  # touch every page: really resident
                hoard[offset] = 1
            os.write(write_end, b"1")
        except MemoryError:
            os.write(write_end, b"0")
        time.sleep(60)
        os._exit(0)
    os.close(write_end)
    children.append((pid, read_end))
holding = 0
for pid, read_end in children:
    holding += os.read(read_end, 1) == b"1"
return {"observation": "%d children hold 200 MB each" % holding, "done": False,
        "success": False}
'''
