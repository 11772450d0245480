"""The exact Python version environment code meets in a sandbox backend.

Named in the setter prompt and in validation reports, so a setter writes for the interpreter its
code will run under (a 3.12-only construct fails on 3.11 with a SyntaxError that should say so).
Asked of the interpreter itself (or the image's recorded version), never of environment code.
"""

from __future__ import annotations

import re
import subprocess
import threading

from sandbox_runner.backends import get_backend, resolve_backend
from sandbox_runner.backends.base import CLEAN_ENV, SANDBOX_PYTHON
from sandbox_runner.errors import SandboxUnavailable

VERSION = re.compile(r"3\.[0-9]{1,3}\.[0-9]{1,3}(?:[abrc+][0-9a-z+]{0,10})?")
ASK = "import platform; print(platform.python_version())"
PROBE_TIMEOUT = 30.0
_versions: dict[tuple[str, str], str] = {}
_lock = threading.Lock()


def sandbox_python_version(*, backend: str = "auto") -> str:
    """Return the Python version (e.g. "3.11.2") of `backend`'s sandboxes, probed once.

    Raises SandboxUnavailable when no backend works or its interpreter cannot be asked.
    """
    name = resolve_backend(backend)
    chosen = get_backend(name)
    image = getattr(chosen, "image", "") if name == "docker" else ""
    key = (name, image)
    with _lock:
        if key not in _versions:
            _versions[key] = _docker_version(image) if name == "docker" else _local_version()
        return _versions[key]


def _checked(text: str, source: str) -> str:
    match = VERSION.search(text or "")
    if match is None:
        raise SandboxUnavailable(f"could not read the sandbox's Python version from {source}")
    return match.group(0)


def _local_version() -> str:
    """The version of the interpreter the local backends (bwrap, unshare) start."""
    try:
        done = subprocess.run([SANDBOX_PYTHON, "-S", "-I", "-c", ASK], capture_output=True,
                              text=True, timeout=PROBE_TIMEOUT, env=CLEAN_ENV, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxUnavailable(f"could not run {SANDBOX_PYTHON}: {error}") from error
    return _checked(done.stdout.strip(), SANDBOX_PYTHON)


def _docker_version(image: str) -> str:
    """The image's PYTHON_VERSION (the official python images record it), else asked of a
    throwaway container without network."""
    from sandbox_runner.backends.docker import docker_client

    try:
        client = docker_client()
        variables = client.images.get(image).attrs.get("Config", {}).get("Env") or []
        recorded = [value.split("=", 1)[1] for value in variables
                    if value.startswith("PYTHON_VERSION=")]
        if recorded:
            return _checked(recorded[0], f"the image {image}")
        output = client.containers.run(image, ["python3", "-S", "-I", "-c", ASK], remove=True,
                                       network_disabled=True, user="65534:65534")
    except SandboxUnavailable:
        raise
    except Exception as error:
        raise SandboxUnavailable(f"could not ask the image {image} for its Python version: "
                                 f"{error}") from error
    return _checked(output.decode("utf-8", "replace").strip(), f"the image {image}")
