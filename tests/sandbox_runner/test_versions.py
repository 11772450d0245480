"""The Python version named in prompts and reports is the one environment code meets."""

from __future__ import annotations

import pytest

from sandbox_runner import SandboxUnavailable, open_sandbox
from sandbox_runner.versions import sandbox_python_version
from tests.sandbox_runner.conftest import TEST_LIMITS

VERSION_ENV = '''
import platform

class Environment:
    max_steps = 1

    def reset(self, seed):
        return platform.python_version()

    def step(self, action):
        return {"observation": "", "done": True, "success": False}
'''


def test_the_named_version_is_the_sandboxes_own(backend):
    with open_sandbox(VERSION_ENV, limits=TEST_LIMITS, backend=backend) as sandbox:
        inside = sandbox.reset(seed=0)
    assert sandbox_python_version(backend=backend) == inside


def test_an_unknown_backend_is_unavailable_not_a_guess():
    with pytest.raises(SandboxUnavailable):
        sandbox_python_version(backend="nonsense")
