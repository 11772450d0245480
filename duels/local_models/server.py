"""Start and stop a local model's OpenAI-compatible server (`python -m llama_cpp.server`).

The server binds 127.0.0.1 only. It is started with `--interrupt_requests False`: the stock
server otherwise cuts a running stream off as soon as another request arrives, so two episodes
of one duel would break each other's replies (the player is also limited to one completion in
flight, see players.py). Its own log (load, per-request timings) goes to a file beside the
virtualenv.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from duels.local_models.catalog import LocalModel, LocalModelError, local_model_get
from duels.local_models.install import local_model_ready

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0
LOG_TAIL_CHARS = 2000
PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass
class RunningServer:
    model: LocalModel
    process: subprocess.Popen
    port: int
    context_window: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        return ""


def _die_with_parent() -> None:
    """In the server's process before it starts: Linux sends it SIGTERM when the process that
    started it dies, so a killed test run or command never leaves a model server behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    """A port nobody listens on at 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_models(base_url: str, *, timeout: float = 2.0) -> dict | None:
    """The server's GET /models answer, or None when it does not answer (yet)."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
            return json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def server_command(*, python: Path, gguf: Path, model: LocalModel, port: int, context: int,
                   threads: int | None) -> list[str]:
    command = [
        str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias",
        model.model, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context),
        "--interrupt_requests", "False",
    ]
    if threads:
        command += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return command


def local_model_start(*, name: str, port: int = 0, context: int | None = None,
                      threads: int | None = None, log_path: Path | None = None,
                      timeout_s: float = START_TIMEOUT_S) -> RunningServer:
    """Start the model's server and return once it answers GET /v1/models; LocalModelError
    (with the server's last output) when it is not installed, exits or stays silent."""
    installed = local_model_ready(name=name)
    model = local_model_get(name)
    if installed is None:
        raise LocalModelError(f"local model {name} is not installed; run "
                              f"`manage.py local_model install {name}` first")
    port = port or free_port()
    context = context or model.context_window
    log_path = log_path or installed.venv / f"server-{port}.log"
    command = server_command(python=installed.python, gguf=installed.gguf, model=model,
                             port=port, context=context, threads=threads)
    with open(log_path, "w") as log:
        # Its own session: a terminal's Ctrl-C reaches the command, which stops the server in
        # order; a stop signal to the command's group never leaves it running.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   preexec_fn=_die_with_parent)
    server = RunningServer(model=model, process=process, port=port, context_window=context,
                           log_path=log_path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalModelError(f"the {name} server exited with code {process.returncode} "
                                  f"before answering:\n{server.log_tail()}")
        if server_models(server.base_url) is not None:
            return server
        time.sleep(0.2)
    local_model_stop(server)
    raise LocalModelError(f"the {name} server did not answer within {timeout_s:g} s:\n"
                          f"{server.log_tail()}")


def local_model_stop(server: RunningServer) -> None:
    """Stop the server (SIGTERM, then SIGKILL after STOP_TIMEOUT_S)."""
    if server.process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=STOP_TIMEOUT_S)
