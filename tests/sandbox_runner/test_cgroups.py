"""Per-sandbox cgroups: finding the hierarchy (v1, v2, none), the start-up sweep of leftovers,
that every backend here limits the whole sandbox, and how `auto` and `backend_status` report a
backend whose limits are per process only."""

from __future__ import annotations

import os
import subprocess

import pytest

import sandbox_runner.backends as backends
from sandbox_runner import backend_status, resolve_backend
from sandbox_runner.cgroups import (
    PREFIX,
    CgroupUnavailable,
    cgroup_layout_discover,
    cgroup_support,
    cgroup_sweep,
    process_start_time,
)
from tests.helpers.parts import need

HYBRID_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_CGROUP = "8:pids:/\n4:memory:/jobs/one\n0::/\n"


def test_hybrid_without_v2_controllers_uses_v1_memory_and_pids(tmp_path):
    layout = cgroup_layout_discover(HYBRID_MOUNTINFO, HYBRID_CGROUP)
    assert layout.version == 1
    assert [str(path) for path in layout.parents] == ["/sys/fs/cgroup/memory/jobs/one",
                                                      "/sys/fs/cgroup/pids"]


def test_unified_hierarchy_with_both_controllers_is_preferred(tmp_path):
    own = tmp_path / "service"
    own.mkdir()
    (own / "cgroup.controllers").write_text("cpu io memory pids\n")
    mountinfo = f"30 1 0:26 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    layout = cgroup_layout_discover(mountinfo, "0::/service\n")
    assert layout.version == 2 and layout.parents == (own,)


def test_unified_controllers_not_passed_on_to_children_are_enabled_or_explained(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    mountinfo = f"30 1 0:26 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    assert cgroup_layout_discover(mountinfo, "0::/\n").version == 2
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids"
    (tmp_path / "cgroup.subtree_control").unlink()
    (tmp_path / "cgroup.subtree_control").mkdir()  # a write the kernel would refuse (EBUSY)
    with pytest.raises(CgroupUnavailable, match="does not pass memory and pids on"):
        cgroup_layout_discover(mountinfo, "0::/\n")


def test_a_mount_of_part_of_the_hierarchy_maps_the_path(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    mountinfo = f"30 1 0:26 /container {tmp_path} rw - cgroup2 cgroup2 rw\n"
    assert cgroup_layout_discover(mountinfo, "0::/container\n").parents == (tmp_path,)


def test_no_usable_hierarchy_says_why():
    mountinfo = "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    with pytest.raises(CgroupUnavailable, match="no memory and pids controllers"):
        cgroup_layout_discover(mountinfo, "0::/nowhere-real\n")
    with pytest.raises(CgroupUnavailable, match="no cgroup v1 memory hierarchy"):
        cgroup_layout_discover("", "")


def test_the_sweep_removes_cgroups_of_dead_processes_only():
    layout, reason = cgroup_support()
    need(layout is not None, f"no per-sandbox cgroups here: {reason}")
    parent = layout.parents[0]
    finished = subprocess.run(["true"], check=True)  # a pid that has certainly ended
    dead = parent / f"{PREFIX}{os.getpid() + 400000}-12345-deadbeef"
    alive = parent / f"{PREFIX}{os.getpid()}-{process_start_time(os.getpid())}-cafebabe"
    assert finished.returncode == 0
    dead.mkdir()
    alive.mkdir()
    try:
        sleeper = subprocess.Popen(["sleep", "60"])
        (dead / "cgroup.procs").write_text(str(sleeper.pid))
        assert cgroup_sweep(parent) == 1
        assert sleeper.wait(timeout=10) == -9  # a process left inside was killed first
        assert not dead.exists() and alive.exists()
    finally:
        for path in (dead, alive):
            if path.exists():
                path.rmdir()


def test_every_backend_here_limits_the_whole_sandbox(backend):
    status = {entry.name: entry for entry in backend_status()}[backend]
    assert status.available
    if backend != "docker":
        layout, reason = cgroup_support()
        assert layout is not None, reason
    assert status.limits_whole_sandbox, status.reason


@pytest.fixture
def no_cgroups(monkeypatch):
    """bwrap and unshare run, docker does not, and this machine offers no cgroup."""
    reasons = {"docker": "missing on purpose", "bwrap": None, "unshare": None}
    for name, backend in backends.BACKENDS.items():
        monkeypatch.setattr(backend, "unavailable_reason", lambda name=name: reasons.get(name))
    monkeypatch.setattr(backends, "_probe_cache", {})
    monkeypatch.setattr("sandbox_runner.backends.base.cgroup_support",
                        lambda: (None, "not root and no delegated cgroup"))
    return reasons


def test_without_cgroups_the_status_says_limits_are_per_process(no_cgroups):
    statuses = {status.name: status.as_dict() for status in backend_status()}
    assert statuses["docker"] == {"name": "docker", "available": False,
                                  "limits_whole_sandbox": False,
                                  "reason": "missing on purpose"}
    assert statuses["bwrap"]["available"] is True
    assert statuses["bwrap"]["limits_whole_sandbox"] is False
    assert "not root and no delegated cgroup" in statuses["bwrap"]["reason"]
    assert "per process only" in statuses["bwrap"]["reason"]


def test_auto_prefers_a_backend_that_limits_the_whole_sandbox(no_cgroups, monkeypatch, settings):
    settings.ENVDUELS_SANDBOX = "auto"
    assert resolve_backend() == "bwrap"  # nothing limits the whole sandbox: still runs
    monkeypatch.setattr(backends.BACKENDS["unshare"], "whole_sandbox_limits_reason",
                        lambda: None)
    assert resolve_backend() == "unshare"
    no_cgroups["docker"] = None
    backends._probe_cache.clear()
    assert resolve_backend() == "docker"
