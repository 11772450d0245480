"""unsafe-local backend: the guest as a plain child process. NO isolation; opt-in only."""

from __future__ import annotations

import logging
import shutil
import sys

from sandbox_runner.backends.base import (
    SANDBOX_PYTHON,
    Backend,
    PopenSandboxProcess,
    guest_command,
)
from sandbox_runner.limits import SandboxLimits

logger = logging.getLogger(__name__)


class UnsafeLocalBackend(Backend):
    name = "unsafe-local"

    def unavailable_reason(self) -> str | None:
        return None

    def whole_sandbox_limits_reason(self) -> str | None:
        return "no isolation at all: ENVDUELS_SANDBOX=unsafe-local"

    def start(self, limits: SandboxLimits) -> PopenSandboxProcess:
        logger.warning(
            "ENVDUELS_SANDBOX=unsafe-local: running environment code WITHOUT any isolation; "
            "it can read and change everything this user can"
        )
        python = SANDBOX_PYTHON if shutil.which(SANDBOX_PYTHON) else sys.executable
        # No process-count limit: RLIMIT_NPROC would count every process of this user.
        return PopenSandboxProcess(self.name, guest_command(limits, python, count_processes=False,
                                                          seccomp=False))
