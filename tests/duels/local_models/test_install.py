"""Installing a local model: the wheel cache decides whether anything is compiled, a current
virtualenv is reused as it is, and the player it serves as is registered (or updated) once."""

from __future__ import annotations

import time

import pytest

from duels.local_models import install
from duels.local_models.catalog import LOCAL_MODELS, SERVER_WHEEL_PREFIX, LocalModelError
from duels.local_models.install import cached_wheel, local_model_install, local_model_ready
from duels.local_models.players import local_model_demo_duel, local_model_register
from duels.models import Duel, Player
from tests.helpers.local_model import NAME
from tests.helpers.parts import need


@pytest.fixture
def cache(settings, tmp_path):
    settings.ENVDUELS_CACHE_DIR = tmp_path
    (tmp_path / "wheels").mkdir()
    return tmp_path


@pytest.mark.parametrize(("filename", "found"), [
    ("llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl", True),  # what pip builds here
    ("llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl", True),
    ("llama_cpp_python-0.3.36-py3-none-macosx_11_0_arm64.whl", False),
    ("llama_cpp_python-0.3.36-py3-none-win_amd64.whl", False),
    ("llama_cpp_python-0.3.35-py3-none-linux_x86_64.whl", False),
    ("llama_cpp_python-0.3.36.tar.gz", False),
])
def test_only_a_wheel_of_the_pinned_version_this_interpreter_installs_counts(
        cache, filename, found):
    (cache / "wheels" / filename).write_bytes(b"")
    assert (cached_wheel(SERVER_WHEEL_PREFIX) is not None) is found


def test_a_cached_wheel_is_used_without_compiling(cache, monkeypatch):
    wheel = cache / "wheels" / "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"
    wheel.write_bytes(b"")

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the wheel")

    monkeypatch.setattr(install, "_run", no_compiling)
    assert install.server_wheel(log=print) == (wheel, False)


def test_an_unknown_model_names_the_known_ones(cache):
    with pytest.raises(LocalModelError, match="known: smollm2"):
        local_model_install(name="gpt-7")


def test_a_model_that_is_not_installed_is_not_ready(cache):
    assert local_model_ready(name=NAME) is None


def test_a_second_install_reuses_the_virtualenv_in_seconds():
    need(local_model_ready(name=NAME) is not None,
         f"the local model {NAME} is not installed: run `python manage.py local_model install "
         f"{NAME}`")
    started = time.monotonic()
    installed = local_model_install(name=NAME)
    assert installed.reused and not installed.compiled
    assert installed.gguf.name == LOCAL_MODELS[NAME].gguf and installed.gguf.stat().st_size > 1e7
    assert time.monotonic() - started < 5


@pytest.mark.django_db
def test_serving_again_updates_the_player_and_keeps_a_persons_params():
    first = local_model_register(name=NAME, base_url="http://127.0.0.1:9001/v1",
                                 context_window=2048)
    first.params = {**first.params, "temperature": 0.7}
    first.max_concurrency = 4
    first.save()
    again = local_model_register(name=NAME, base_url="http://127.0.0.1:9002/v1",
                                 context_window=4096)
    assert again.pk == first.pk and Player.objects.filter(name="local-smollm2").count() == 1
    assert again.base_url == "http://127.0.0.1:9002/v1"
    assert again.params["context_window"] == 4096 and again.params["temperature"] == 0.7
    assert again.max_concurrency == 1  # the server answers one request at a time


@pytest.mark.django_db
def test_a_player_of_another_kind_with_that_name_is_never_taken_over(make):
    make.player(name="local-smollm2", provider="anthropic", model="claude-x",
                api_key_env="ANTHROPIC_API_KEY")
    with pytest.raises(LocalModelError, match="rename it"):
        local_model_register(name=NAME, base_url="http://127.0.0.1:9001/v1",
                             context_window=2048)


@pytest.mark.django_db(transaction=True)
def test_the_demo_duel_is_queued_once():
    player = local_model_register(name=NAME, base_url="http://127.0.0.1:9001/v1",
                                  context_window=2048)
    duel = local_model_demo_duel(player=player)
    assert duel is not None and duel.b.name == "builtin-rookie" and duel.attempts == 1
    assert local_model_demo_duel(player=player) is None
    assert Duel.objects.count() == 1
