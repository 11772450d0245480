"""Settings come from the environment; bad values fail loudly and name the variable."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "import envduels_site.settings as s; "
    "print(s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'])"
)


def load_settings(**env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True, text=True, env=environment, timeout=60,
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DJANGO_DEBUG", "maybe"),
        ("ENVDUELS_BUILTIN_LATENCY_MS", "fast"),
        ("ENVDUELS_BUILTIN_LATENCY_MS", "-5"),
        ("ENVDUELS_SANDBOX", "chroot"),
        ("DATABASE_URL", "nonsense://"),
        ("REDIS_URL", "notaurl"),
    ],
)
def test_bad_value_raises_improperly_configured_naming_the_variable(variable, value):
    result = load_settings(**{variable: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert variable in result.stderr


def test_defaults_need_nothing_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}
    env["ENVDUELS_VAR_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True, text=True, env={**env, "REDIS_URL": ""}, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "sqlite3" in result.stdout and "InMemoryChannelLayer" in result.stdout
    assert (tmp_path / "secret_key").exists()


def test_postgres_and_redis_urls_switch_backends():
    result = load_settings(
        DATABASE_URL="postgres://u:p@127.0.0.1:5432/db", REDIS_URL="redis://127.0.0.1:6379/0"
    )
    assert result.returncode == 0, result.stderr
    assert "postgresql" in result.stdout


@pytest.mark.parametrize("value", ["notaurl", "redis://", "http://127.0.0.1:6379/0",
                                   "redis://127.0.0.1:port/0", "redis://127.0.0.1:6379/zero",
                                   "unix://"])
def test_a_malformed_redis_url_is_refused_with_the_expected_shape(monkeypatch, value):
    from django.core.exceptions import ImproperlyConfigured

    from envduels_site.settings import env_redis_url

    monkeypatch.setenv("REDIS_URL", value)
    with pytest.raises(ImproperlyConfigured, match=r"REDIS_URL .*redis://"):
        env_redis_url("REDIS_URL")


@pytest.mark.parametrize("value", ["redis://127.0.0.1:6379/0", "redis://:secret@redis.internal",
                                   "rediss://user:pw@cache.example:6380/2",
                                   "unix:///run/redis/redis.sock"])
def test_redis_urls_in_the_usual_shapes_are_accepted(monkeypatch, value):
    from envduels_site.settings import env_redis_url

    monkeypatch.setenv("REDIS_URL", value)
    assert env_redis_url("REDIS_URL") == value
