"""The Docker backend's direct FIFO channel: private, checked, and gone after the handshake."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox_runner import (
    EnvCodeError,
    EnvCrashed,
    SandboxTimeout,
    StepResult,
    open_sandbox,
)
from sandbox_runner.backends.docker import CHANNEL_PATH, CHANNEL_ROOT, docker_client
from tests.sandbox_runner import hostile
from tests.sandbox_runner.conftest import TEST_LIMITS, backend_available

pytestmark = pytest.mark.timeout(90)

WRONG_ID_REPLY = '''
os.write(protocol_out_fd(), b'{"id": "not-' + current_request_id().encode() + b'", "ok": true, '
         b'"observation": "forged", "done": true, "success": true}\\n')
return {"observation": "real", "done": False, "success": False}
'''
# Everything an environment could try through the channel's path: open the FIFOs, list the
# directory, create files in it. Each attempt is reported in the observation.
USE_CHANNEL_PATH = '''
results = []
fake = ('{"id": "%s", "ok": true, "observation": "FORGED", "done": true, "success": true}\\n'
        % current_request_id())
for name, flags in (("out", os.O_WRONLY | os.O_NONBLOCK), ("in", os.O_RDONLY | os.O_NONBLOCK)):
    try:
        fd = os.open(CHANNEL + "/" + name, flags)
    except OSError as error:
        results.append("%s: %s" % (name, type(error).__name__))
    else:
        if name == "out":
            os.write(fd, fake.encode())
        results.append("%s: opened" % name)
try:
    results.append("listing: %r" % (os.listdir(CHANNEL),))
except OSError as error:
    results.append("listing: %s" % type(error).__name__)
for name in ("out", "planted"):
    try:
        os.mkfifo(CHANNEL + "/" + name)
        results.append("mkfifo %s: made" % name)
    except OSError as error:
        results.append("mkfifo %s: %s" % (name, type(error).__name__))
return {"observation": "; ".join(results), "done": False, "success": False}
'''


@pytest.fixture
def docker() -> str:
    backend_available("docker")
    return "docker"


def wait_gone(path: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


def test_a_reply_on_the_fifo_that_does_not_answer_the_request_is_rejected(docker):
    code = hostile.environment(step=WRONG_ID_REPLY)
    with open_sandbox(code, limits=TEST_LIMITS, backend=docker) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(EnvCodeError, match="does not answer"):
            sandbox.step("go")
        with pytest.raises(EnvCodeError):  # the sandbox was killed for good
            sandbox.step("again")


def test_the_channel_path_cannot_be_used_to_forge_replies(docker):
    code = hostile.environment(step=USE_CHANNEL_PATH, prelude=f"CHANNEL = {CHANNEL_PATH!r}\n")
    with open_sandbox(code, limits=TEST_LIMITS, backend=docker) as sandbox:
        sandbox.reset(seed=0)
        result = sandbox.step("go")
        assert "FORGED" not in result.observation
        assert result.done is False and result.success is False
        assert "out: FileNotFoundError" in result.observation
        assert "in: FileNotFoundError" in result.observation
        assert "listing: []" in result.observation
        assert "mkfifo out: made" not in result.observation
        assert "mkfifo planted: made" not in result.observation
        # The channel still works, and nothing forged is waiting in it.
        assert sandbox.step("again") == StepResult(result.observation, False, False, 0.0)


def test_the_private_directory_is_gone_before_the_environment_loads(docker):
    with open_sandbox(hostile.environment(), limits=TEST_LIMITS, backend=docker) as sandbox:
        directory = sandbox.process.host_channel_dir
        assert directory.parent == CHANNEL_ROOT
        assert not directory.exists()
        assert sandbox.reset(seed=0) == "ready"
    assert not directory.exists()


def test_the_private_directory_is_removed_when_the_guest_never_comes_up(docker, monkeypatch):
    from sandbox_runner.backends import docker as docker_module

    made = []
    original = docker_module.make_channel_dir

    def recording_make_channel_dir():
        made.append(original())
        return made[-1]

    monkeypatch.setattr(docker_module, "make_channel_dir", recording_make_channel_dir)
    monkeypatch.setattr(docker_module, "READY_TIMEOUT", 0.0)
    with pytest.raises(SandboxTimeout):
        docker_module.DockerBackend().start(TEST_LIMITS)
    assert made and not made[0].exists()


def test_only_the_channel_directory_is_mounted_and_the_hardening_stays(docker):
    with open_sandbox(hostile.environment(), limits=TEST_LIMITS, backend=docker) as sandbox:
        attrs = docker_client().api.inspect_container(sandbox.process.container.id)
    mounts = [m for m in attrs["Mounts"] if m["Type"] == "bind"]
    assert [(m["Destination"], m["RW"]) for m in mounts] == [(CHANNEL_PATH, False)]
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert attrs["Config"]["NetworkDisabled"] is True
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert not host["Init"]  # no engine init: pid 1 is the filtered guest
    assert host["LogConfig"]["Type"] == "none"
    assert attrs["Config"]["User"] == "65534:65534"
    assert not any("PROXY" in variable.upper() for variable in attrs["Config"]["Env"] or [])


def test_container_exit_is_noticed_promptly(docker):
    code = hostile.environment(step="os._exit(7)")
    with open_sandbox(code, limits=TEST_LIMITS, backend=docker) as sandbox:
        sandbox.reset(seed=0)
        started = time.monotonic()
        with pytest.raises(EnvCrashed, match="status 7"):
            sandbox.step("go")
    assert time.monotonic() - started < TEST_LIMITS.call_timeout


def test_a_ready_container_that_died_is_known_dead_without_asking_the_engine(docker,
                                                                            monkeypatch):
    from sandbox_runner.backends.docker import DockerBackend

    process = DockerBackend().start(TEST_LIMITS)
    try:
        # Liveness comes from the attach stream alone: the engine is not asked (it may be busy).
        monkeypatch.setattr(process.container, "reload", lambda: pytest.fail("engine asked"))
        assert process.alive()
        docker_client().api.kill(process.container.id)
        deadline = time.monotonic() + 10
        while process.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process.alive()
    finally:
        process.kill()
    assert not process.alive()


NETWORK_NAMESPACE = '''
own = os.readlink("/proc/self/ns/net")
return {"observation": "%s %s" % (own, sorted(os.listdir("/sys/class/net"))), "done": False,
        "success": False}
'''


def test_the_container_has_a_network_namespace_of_its_own_with_loopback_only(docker):
    """Networking is disabled at the engine (no per-container network hook), yet every
    container still gets a fresh, empty network namespace: never the host's, never shared."""
    import os

    code = hostile.environment(NETWORK_NAMESPACE)
    # Both at once: a namespace's number is only unique while it exists.
    with open_sandbox(code, limits=TEST_LIMITS, backend=docker) as first, \
            open_sandbox(code, limits=TEST_LIMITS, backend=docker) as second:
        seen = []
        for sandbox in (first, second):
            sandbox.reset(0)
            seen.append(sandbox.step("look").observation.split(" ", 1))
    host_namespace = os.readlink("/proc/self/ns/net")
    assert [interfaces for _namespace, interfaces in seen] == ["['lo']", "['lo']"]
    namespaces = {namespace for namespace, _interfaces in seen}
    assert len(namespaces) == 2 and host_namespace not in namespaces


def test_a_remote_engine_is_never_watched_through_this_hosts_process_ids(monkeypatch):
    """A remote engine's container pid names some unrelated process here: no memory alarm is
    taken from it (the container's exit status reports memory instead)."""
    from types import SimpleNamespace

    from sandbox_runner.backends import docker as docker_module

    monkeypatch.setattr(docker_module, "_local_cgroup_v1_memory", lambda: True)

    def engine(base_url):
        return SimpleNamespace(api=SimpleNamespace(base_url=base_url))

    assert docker_module.memory_alarms_possible(engine("http+docker://localhost"))
    for remote in ("http://10.0.0.5:2375", "https://builder:2376", "http+docker://ssh"):
        assert not docker_module.memory_alarms_possible(engine(remote))
