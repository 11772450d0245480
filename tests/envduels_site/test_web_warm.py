"""The web process loads, before it serves, what a first visitor's request would otherwise load:
the URL configuration with every namespace's `reverse()` table, and the first pages' templates.
Those were most of a first load's server time (benchmarks/first_load_bench.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import envduels_site.asgi  # noqa: F401  the web process's application, as Daphne loads it
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.template import engines
from django.test import Client
from django.urls.resolvers import URLResolver
from envduels_site.startup import WARM_TEMPLATES

call_command("migrate", verbosity=0)
built = []
original = URLResolver._populate
URLResolver._populate = lambda self: (built.append(self), original(self))[1]
loader = engines["django"].engine.template_loaders[0].loaders[0]  # partials wrap the cache
cached = set(loader.get_template_cache)
client = Client()
client.force_login(get_user_model().objects.create_user("first-visitor", is_staff=True))
for path in ("/", "/duels/", "/duels/new/", "/admin/login/?next=/admin/"):
    response = client.get(path)
    assert response.status_code in (200, 302), (path, response.status_code)
print(len(built), sorted(set(WARM_TEMPLATES) - cached))
"""


@pytest.mark.slow
def test_a_first_request_builds_no_url_table_and_finds_its_templates_compiled(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(ENVDUELS_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="envduels_site.settings",
               DJANGO_ALLOWED_HOSTS="testserver")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "0 []"
