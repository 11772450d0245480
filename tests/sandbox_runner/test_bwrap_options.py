"""bwrap refuses nested user namespaces with --disable-userns where the installed version has it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sandbox_runner import SandboxLimits
from sandbox_runner.backends.bwrap import BwrapBackend, disable_userns_option
from tests.helpers.parts import need


def fake_bwrap(tmp_path, help_text: str) -> str:
    program = tmp_path / "bwrap"
    program.write_text(f"#!/bin/sh\necho '{help_text}'\n")
    program.chmod(0o755)
    return str(program)


def test_an_older_bwrap_without_the_option_still_starts(tmp_path):
    old = fake_bwrap(tmp_path, "    --unshare-user  Create new user namespace")
    assert disable_userns_option(old) == []


def test_the_installed_bwrap_disables_nested_user_namespaces():
    bwrap = shutil.which("bwrap")
    need(bwrap is not None, "bubblewrap is not installed")
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout
    if tuple(int(part) for part in version.split()[-1].split(".")[:2]) < (0, 8):
        pytest.skip(f"{version.strip()} predates --disable-userns (the seccomp filter covers it)")
    assert disable_userns_option(bwrap) == ["--disable-userns"]
    command = BwrapBackend().bwrap_command(SandboxLimits(), ["true"], 3)
    assert command.index("--disable-userns") > command.index("--unshare-user")
