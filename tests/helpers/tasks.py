"""Tasks used only by tests of the task queue itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

from django_tasks import task


@task()
def record_claim(*, marker_dir: str, number: int) -> int:
    """Leave a marker naming the task and the worker process that ran it."""
    time.sleep(0.2)
    Path(marker_dir, f"{number}-{os.getpid()}").touch()
    return os.getpid()
