"""The guest program that runs inside every sandbox; the host only reads its source."""

from __future__ import annotations

import hashlib
import os
import subprocess
from functools import cache
from pathlib import Path

GUEST_PATH = Path(__file__).with_name("envduels_guest.py")
GUEST_PATH_IN_IMAGE = "/opt/envduels/envduels_guest.py"
# Where a launcher that hands the sandbox the guest's compiled code puts it, and the program
# that runs it: the sandbox's interpreter then never compiles the guest's source itself.
GUEST_CODE_IN_SANDBOX = "/.envduels_guest_code"
GUEST_BOOTSTRAP = ("import marshal;exec(marshal.loads(open(%r,'rb').read()))"
                   % GUEST_CODE_IN_SANDBOX)
_COMPILE = ("import marshal,sys;sys.stdout.buffer.write(marshal.dumps("
            "compile(sys.stdin.buffer.read(),'<string>','exec')))")


@cache
def guest_source() -> str:
    """Return the guest program's source text (passed to `python3 -c` by local backends)."""
    return GUEST_PATH.read_text()


@cache
def guest_code(python: str) -> bytes:
    """The guest compiled by `python` itself (marshal's format is the interpreter's own), once
    per host process: compiling it in every sandbox cost each start about 6 ms of CPU. Compiled
    as `python -c` compiles it (file name `<string>`), so it runs the same either way.

    Raises OSError when `python` cannot compile it."""
    try:
        done = subprocess.run([python, "-S", "-I", "-c", _COMPILE], input=guest_source().encode(),
                              capture_output=True, timeout=60, check=False,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.TimeoutExpired) as error:
        raise OSError(f"{python} could not compile the sandbox's guest: {error}") from error
    if done.returncode != 0 or not done.stdout:
        tail = done.stderr.decode("utf-8", "replace").strip()[-500:]
        raise OSError(f"{python} could not compile the sandbox's guest: {tail}")
    return done.stdout


def guest_hash() -> str:
    """Return a short content hash of the guest, stored as a label on the sandbox image."""
    return hashlib.sha256(guest_source().encode()).hexdigest()[:16]


@cache
def guest_namespace() -> dict:
    """The guest program's functions and tables, without running it."""
    namespace: dict = {"__name__": "envduels_guest"}
    exec(compile(guest_source(), str(GUEST_PATH), "exec"), namespace)
    return namespace


def seccomp_program(machine: str | None = None) -> bytes:
    """Return the guest's seccomp filter (classic BPF) for `machine` (default: this one), so a
    launcher can install the very same filter before the guest starts. Raises OSError for an
    architecture without a syscall table."""
    return guest_namespace()["seccomp_program"](machine or os.uname().machine)
