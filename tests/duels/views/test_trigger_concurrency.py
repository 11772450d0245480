"""The hourly duel limit holds when many requests arrive at once (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client, override_settings

from duels.models import Duel
from tests.helpers.postgres import fresh_postgres_database

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 5
REQUESTS = 16


def run_together(count: int, call) -> list:
    """Run `call()` in `count` threads released at the same moment; their results."""
    barrier = threading.Barrier(count)
    results: list = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(call())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return sorted(results)


def post_at_once(*, user, a, b, count: int) -> list[int]:
    """`count` POSTs to /duels/new/ by `user`, released together; their status codes."""
    data = {"a": str(a.uuid), "b": str(b.uuid), "attempts": "1", "cost_cap": ""}

    def post() -> int:
        client = Client()
        client.force_login(user)
        return client.post("/duels/new/", data).status_code

    return run_together(count, post)


def start_at_once(*, user, a, b, count: int) -> list[str]:
    """`count` calls of the service behind /duels/new/, released together: what each got."""
    from duels.services.duels import DuelRateLimited, duel_start_for_user

    def start() -> str:
        try:
            duel_start_for_user(user=user, a=a, b=b, attempts=1, observe=False, cost_cap=None)
        except DuelRateLimited:
            return "limited"
        return "created"

    return run_together(count, start)


@pytest.mark.django_db(transaction=True)
@override_settings(ENVDUELS_DUEL_RATE_PER_HOUR=LIMIT)
def test_concurrent_posts_never_exceed_the_limit_on_sqlite(owner, make):
    a, b = make.player(), make.player()
    statuses = post_at_once(user=owner, a=a, b=b, count=REQUESTS)
    assert sorted(statuses) == [302] * LIMIT + [429] * (REQUESTS - LIMIT)
    assert Duel.objects.filter(created_by=owner).count() == LIMIT


@pytest.mark.postgres
@pytest.mark.slow
def test_concurrent_posts_never_exceed_the_limit_on_postgresql():
    with fresh_postgres_database(migrated=True) as url:
        env = {**os.environ, "DATABASE_URL": url, "ENVDUELS_DUEL_RATE_PER_HOUR": str(LIMIT)}
        probe = (
            "from django.conf import settings\n"
            "from django.test.utils import override_settings, setup_test_environment\n"
            "setup_test_environment()\n"
            "override_settings(STORAGES={**settings.STORAGES, 'staticfiles': {'BACKEND': "
            "'django.contrib.staticfiles.storage.StaticFilesStorage'}}).enable()\n"
            "from django.contrib.auth import get_user_model\n"
            "from duels.models import Duel, Player\n"
            "from tests.duels.views.test_trigger_concurrency import post_at_once, start_at_once\n"
            # No password: the requests sign in with force_login, and hashing one with the
            # site's PBKDF2 would cost this process 0.4 CPU-s.
            "user = get_user_model().objects.create_user('racer')\n"
            "from duels.services.roles import operator_add\n"
            "operator_add(username='racer')\n"
            "a = Player.objects.create(name='pa', provider='builtin', builtin=True, model='m')\n"
            "b = Player.objects.create(name='pb', provider='builtin', builtin=True, model='m')\n"
            # Concurrent requests through the whole stack, then concurrent service calls.
            f"statuses = post_at_once(user=user, a=a, b=b, count={REQUESTS})\n"
            "print(statuses, Duel.objects.filter(created_by=user).count())\n"
            "Duel.objects.all().delete()\n"
            f"outcomes = start_at_once(user=user, a=a, b=b, count={REQUESTS})\n"
            "print(outcomes, Duel.objects.filter(created_by=user).count())\n"
        )
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", probe], cwd=ROOT,
            env=env, capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        statuses = [302] * LIMIT + [429] * (REQUESTS - LIMIT)
        outcomes = ["created"] * LIMIT + ["limited"] * (REQUESTS - LIMIT)
        assert result.stdout.strip().splitlines()[-2:] == [
            f"{statuses} {LIMIT}", f"{outcomes} {LIMIT}"
        ], result.stderr[-3000:]
