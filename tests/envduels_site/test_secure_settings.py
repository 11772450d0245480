"""DJANGO_SECURE=1: secure cookies, HSTS, HTTPS redirect, the proxy's scheme header."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, django
django.setup()
from django.conf import settings as s
from django.test import Client
from django.test.utils import override_settings, setup_test_environment
setup_test_environment()
# Plain static names, as in the test suite (no collectstatic manifest needed).
override_settings(STORAGES={**s.STORAGES, "staticfiles": {
    "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}).enable()
plain = Client().get("/api/v1/")
proxied = Client().get("/api/v1/", HTTP_X_FORWARDED_PROTO="https")
health = Client().get("/healthz")
print(json.dumps({
    "session_cookie_secure": s.SESSION_COOKIE_SECURE,
    "csrf_cookie_secure": s.CSRF_COOKIE_SECURE,
    "ssl_redirect": s.SECURE_SSL_REDIRECT,
    "hsts_seconds": s.SECURE_HSTS_SECONDS,
    "proxy_header": s.SECURE_PROXY_SSL_HEADER,
    "plain": [plain.status_code, plain.get("Location")],
    "proxied": [proxied.status_code, proxied.get("Strict-Transport-Security")],
    "health": health.status_code,
}))
"""


def probe(tmp_path, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SECURE"}
    environment.update(DJANGO_SETTINGS_MODULE="envduels_site.settings",
                       ENVDUELS_VAR_DIR=str(tmp_path), **env)
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=environment, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_django_secure_turns_on_https_only_behaviour(tmp_path):
    secure = probe(tmp_path, DJANGO_SECURE="1")
    assert secure["session_cookie_secure"] and secure["csrf_cookie_secure"]
    assert secure["ssl_redirect"] and secure["hsts_seconds"] == 31_536_000
    assert secure["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert secure["plain"] == [301, "https://testserver/api/v1/"]
    assert secure["proxied"] == [401, "max-age=31536000"]
    assert secure["health"] != 301  # load-balancer probes over plain HTTP still get an answer


def test_off_by_default_so_a_local_run_works_over_http(tmp_path):
    local = probe(tmp_path)
    assert not local["session_cookie_secure"] and not local["ssl_redirect"]
    assert local["hsts_seconds"] == 0 and local["proxy_header"] is None
    assert local["plain"][0] == 401
