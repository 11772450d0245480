"""Virtualenvs with a trainer library (verifiers, openenv, trl), cached outside the repository.

A trainer library is heavy and never enters the project's environment. Each virtualenv is built
once per machine under ENVDUELS_TEST_CACHE (default ~/.cache/envduels/trainer-venvs), keyed by a
hash of its requirements (and of uv.lock and the Python version when EnvDuels goes in too), and
reused by every later run; a file lock lets parallel test processes share it. Installs come
from the package index; local wheels (/opt/wheels, where torch's CPU build sits) are offered
first when the folder exists.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LOCAL_WHEELS = Path("/opt/wheels")


def cache_root() -> Path:
    return Path(os.environ.get("ENVDUELS_TEST_CACHE")
                or Path.home() / ".cache" / "envduels" / "trainer-venvs")


def uv_binary() -> str | None:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.exists() else shutil.which("uv")


def _install(uv: str, python: str, args: list[str]) -> None:
    links = ["--find-links", str(LOCAL_WHEELS)] if LOCAL_WHEELS.is_dir() else []
    done = subprocess.run([uv, "pip", "install", "-q", "-p", python, *links, *args],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"uv pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def trainer_venv(name: str, *, requirements: list[list[str]], envduels: bool = False,
                 packages: tuple[Path, ...] = (), python: str | None = None) -> Path:
    """The cached virtualenv `name` with `requirements` installed (each inner list one install
    step, in order), plus EnvDuels from this checkout when `envduels`; then `packages` (freshly
    exported directories) installed into it without dependencies, every run. `python` is the
    interpreter it is made with (default this one's)."""
    uv = uv_binary()
    if uv is None:
        raise RuntimeError("uv is not installed (make install puts it in .venv/bin)")
    interpreter = python or sys.executable
    version = sys.version if python is None else subprocess.run(
        [python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
        check=True).stdout
    material = repr(requirements).encode() + version.encode()
    if envduels:
        material += (ROOT / "uv.lock").read_bytes()
    key = hashlib.sha256(material).hexdigest()[:16]
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"{name}-{key}"
    python = str(venv / "bin" / "python")
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process builds or installs at a time
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([uv, "venv", "-q", "-p", interpreter, str(venv)], check=True)
            for step in requirements:
                _install(uv, python, step)
            if envduels:
                _install(uv, python, [str(ROOT)])
            (venv / "ready").write_text("ok")
        elif envduels:  # the current EnvDuels source, its dependencies already in place
            _install(uv, python, ["--no-deps", "--reinstall-package", "envduels", str(ROOT)])
        if packages:
            _install(uv, python, ["--no-deps", "--reinstall", *map(str, packages)])
    return venv


def venv_environment(**extra: str) -> dict[str, str]:
    """The environment for a process in a trainer virtualenv: no project paths or settings;
    bytecode is written (later runs import the library compiled)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
    environment.update({"PYTHONPATH": "", "DJANGO_SETTINGS_MODULE": "", **extra})
    return environment
