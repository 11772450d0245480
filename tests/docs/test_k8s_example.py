"""The Kubernetes example for `serve_envs` follows the security page: only trainers' pods reach
it (a NetworkPolicy) and it reaches nothing, the container keeps the runtime's default seccomp
profile, and its sessions' sandboxes (with the ready ones) fit in the pod's memory limit."""

from __future__ import annotations

import re
from pathlib import Path

from sandbox_runner import SandboxLimits

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "k8s" / "serve-envs.yaml"
SERVER_PROCESS_BYTES = 512 * 2**20  # the server process itself: Python, Django, Daphne


def option(text: str, name: str) -> int:
    return int(re.search(rf'"{name}", "(\d+)"', text).group(1))


def test_only_trainers_reach_the_server_and_it_reaches_nothing():
    text = EXAMPLE.read_text()
    policy = text[text.index("kind: NetworkPolicy"):].split("\n---")[0]
    assert 'policyTypes: ["Ingress", "Egress"]' in policy
    assert "matchLabels: {envduels-trainer: \"true\"}" in policy
    assert "egress: []" in policy


def test_the_container_keeps_the_runtime_default_seccomp_profile():
    text = EXAMPLE.read_text()
    assert "seccompProfile: {type: RuntimeDefault}" in text
    assert "Unconfined" not in text
    # The namespace calls bubblewrap needs come from the pod's own user namespace.
    assert "hostUsers: false" in text


def test_sessions_times_sandbox_memory_fit_in_the_pod_limit():
    text = EXAMPLE.read_text()
    limit = re.search(r"limits: \{cpu: \"\d+\", memory: (\d+)Gi\}", text)
    limit_bytes = int(limit.group(1)) * 2**30
    ready = int(re.search(r"name: ENVDUELS_SANDBOX_READY, value: \"(\d+)\"", text).group(1))
    sandboxes = option(text, "--max-sessions") + ready
    needed = sandboxes * SandboxLimits().memory_bytes + SERVER_PROCESS_BYTES
    assert needed <= limit_bytes, f"{sandboxes} sandboxes need {needed / 2**30:.1f} GiB"
    assert option(text, "--max-sessions-per-client") < option(text, "--max-sessions")
