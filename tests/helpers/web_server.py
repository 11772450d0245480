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


def serve_envs_start(*args: str) -> subprocess.Popen:
    """Start `manage.py serve_envs ARGS`; return once it listens (its first line says so)."""
    import sys

    server = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve_envs", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    line = server.stdout.readline()
    if not line.startswith(b"serving "):
        server.kill()
        raise AssertionError(server.communicate()[1][-2000:].decode())
    return server


def one_design_export(out: Path, source: str) -> Path:
    """An envduels-v1 export of one design, for `serve_envs --from`."""
    import uuid

    from duels.analytics.designs import content_hash
    from duels.selectors.training_sets import TrainingItem
    from duels.trainers.envduels_v1 import envduels_v1_write

    design = content_hash(source)
    item = TrainingItem(design=design, environment=str(uuid.uuid4()), title="Served",
                        author="tester", family="test", source=source, content_hash=design,
                        max_steps=None, hint=None, cluster=design, training={"environments": []})
    return envduels_v1_write(items=[item], out=out)
