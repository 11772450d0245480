"""What the benchmarks that start `make run` share: a free port, "does it answer?", and a stop.

Not a benchmark itself; startup_bench.py and install_bench.py import it (run from the checkout,
`python benchmarks/NAME.py` puts this folder on the import path).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    """True once `url` answers with anything but a server error."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status < 500
    except urllib.error.HTTPError as error:
        return error.code < 500
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def stop(make: subprocess.Popen) -> None:
    """Ctrl-C to `make run`'s process group, as a person would; SIGKILL if it does not stop."""
    if make.poll() is not None:
        return
    os.killpg(make.pid, signal.SIGINT)
    try:
        make.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(make.pid, signal.SIGKILL)
        make.wait()
