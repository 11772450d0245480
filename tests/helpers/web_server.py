"""A real web process (the `manage.py serve` Daphne) on the SQLite test database, for tests
that measure what a server process does."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from django.conf import settings

from duels.management.commands.serve import daphne_argv

ROOT = Path(__file__).resolve().parents[2]


def web_server_start(port: int) -> subprocess.Popen:
    """Start the web process on 127.0.0.1:`port` over the test database (SQLite only)."""
    environment = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{Path(settings.DATABASES['default']['NAME']).resolve()}",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    }
    return subprocess.Popen(daphne_argv(host="127.0.0.1", port=port), cwd=ROOT,
                            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def memory_kib(pid: int, field: str) -> int:
    """A field of /proc/PID/status in KiB: VmRSS now, VmHWM the peak."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1))
