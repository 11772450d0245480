"""The real local model (SmolLM2-135M-Instruct behind llama-cpp-python) for tests.

One server per test process, started on first use and stopped at the end of the session
(loading the 98 MB model takes 1-3 s, so a server per pytest-xdist worker is cheaper than
sharing one across processes). The model must be installed (`manage.py local_model install
smollm2`, as `.ci/run` does); otherwise the tests skip with that command, and fail under
ENVDUELS_REQUIRE_ALL=1 as every other real part does.
"""

from __future__ import annotations

import pytest

from duels.local_models.install import local_model_ready
from duels.local_models.server import RunningServer, local_model_start, local_model_stop
from tests.helpers.parts import need

NAME = "smollm2"
# The window the tests' server holds: small, so prompts stay cheap on 2 cores.
TEST_CONTEXT = 2048


@pytest.fixture(scope="session")
def local_model_server(tmp_path_factory) -> RunningServer:
    need(local_model_ready(name=NAME) is not None,
         f"the local model {NAME} is not installed: run `python manage.py local_model install "
         f"{NAME}` (compiles llama-cpp-python once, about 5 minutes on 2 cores, more when busy)")
    log = tmp_path_factory.mktemp("local-model") / "server.log"
    server = local_model_start(name=NAME, context=TEST_CONTEXT, log_path=log)
    yield server
    local_model_stop(server)
