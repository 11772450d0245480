"""EnvDuels settings: one file, driven by environment variables with working local defaults."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ENVDUELS_VAR_DIR", BASE_DIR / "var"))


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of IP addresses or networks (CIDR), normalised."""
    import ipaddress

    networks = []
    for item in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must list IP addresses or networks (e.g. 127.0.0.1,10.0.0.0/8), "
                f"got {item!r}") from None
    return networks


DEBUG = env_bool("DJANGO_DEBUG", False)


def _secret_key() -> str:
    configured = os.environ.get("DJANGO_SECRET_KEY")
    if configured:
        return configured
    # A local install keeps a generated key in var/ so sessions survive restarts.
    # Several processes may start at once on a fresh install (workers, parallel tests): the key
    # is written to a file of its own and linked into place, so none reads it half-written and
    # the first link wins.
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        from django.core.management.utils import get_random_secret_key

        VAR_DIR.mkdir(parents=True, exist_ok=True)
        draft = VAR_DIR / f"secret_key.{os.getpid()}"
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(get_random_secret_key())
        try:
            os.link(draft, key_file)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# Daphne's app makes `manage.py runserver` serve the ASGI application (pages and websockets)
# instead of Django's WSGI server. Importing it installs Twisted's reactor, about a second of
# imports, so every other command goes without it; `manage.py serve` runs Daphne itself.
DAPHNE_RUNSERVER = ["daphne"] if sys.argv[1:2] == ["runserver"] else []

INSTALLED_APPS = [
    *DAPHNE_RUNSERVER,
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "django_tasks",
    "django_tasks_db",
    "sandbox_runner",
    "duels",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "envduels_site.middleware.ContentSecurityPolicyMiddleware",
    "envduels_site.middleware.QueryTimeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "envduels_site.urls"
WSGI_APPLICATION = "envduels_site.wsgi.application"
ASGI_APPLICATION = "envduels_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite in var/ (WAL, busy timeout) unless DATABASE_URL names another. Every SQLite
# database, the default one or one named by DATABASE_URL, gets the same settings and the same
# engine: several worker threads and processes write to it at once, and the threads of one
# process take turns on a lock of their own rather than in SQLite's polling busy handler.
SQLITE_ENGINE = "envduels_site.sqlite3_backend"
SQLITE_OPTIONS = {
    "timeout": 30,
    "transaction_mode": "IMMEDIATE",
    "init_command": (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=30000;"
    ),
}
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
    except Exception as exc:  # dj_database_url raises several types for bad URLs
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        if DATABASES["default"]["NAME"] in {"", ":memory:"}:
            raise ImproperlyConfigured(
                "DATABASE_URL names an in-memory SQLite database, which workers cannot share; "
                "name a file, e.g. sqlite:////srv/envduels/envduels.sqlite3"
            )
        DATABASES["default"]["ENGINE"] = SQLITE_ENGINE
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["OPTIONS"] = {**SQLITE_OPTIONS,
                                           **DATABASES["default"].get("OPTIONS", {})}
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": SQLITE_ENGINE,
            "NAME": VAR_DIR / "envduels.sqlite3",
            "OPTIONS": dict(SQLITE_OPTIONS),
            # A file (not :memory:) so live-server tests and worker processes share it; one per
            # test run so parallel runs in one checkout never clash.
            "TEST": {"NAME": VAR_DIR / f"test_envduels_{os.getpid()}.sqlite3"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channel layer: Redis when REDIS_URL is set, else in-memory (single process only).
def env_redis_url(name: str) -> str:
    """A redis://, rediss:// or unix:// URL (or empty), checked here rather than at the first
    live stream, where a typo would only show as replays that never update."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018  raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a valid Redis URL ({exc}): {raw!r}") from exc
    database = parts.path.strip("/")
    if parts.scheme in {"redis", "rediss"} and parts.hostname and (
        database == "" or database.isdigit()
    ):
        return raw
    if parts.scheme == "unix" and parts.path:
        return raw
    raise ImproperlyConfigured(
        f"{name} must look like redis://HOST:6379/0 (or rediss://…, unix:///path/redis.sock), "
        f"got {raw!r}"
    )


REDIS_URL = env_redis_url("REDIS_URL")
if REDIS_URL:
    # A receive blocks in Redis for up to 5 s (channels_redis's brpop_timeout), as long as
    # redis-py's default socket timeout: on a quiet channel the read would time out first and
    # an episode hub would drop its subscription, missing doorbells until it subscribed again.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}], "capacity": 5000,
                       "expiry": 30},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "duels", "episodes", "analytics"],
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request without it
# Charts use the cartesian plotly.js bundle vendored in static/vendor/plotly (offline, and a
# third of the size of the full bundle that ships with the plotly Python package).
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # `collectstatic` (run by `make run`) writes content-hashed, gzip- and brotli-compressed
    # copies that WhiteNoise serves with a ten-year cache lifetime. Without collectstatic (a bare
    # checkout, a web machine started with migrate and Daphne only) pages fall back to the plain
    # file names, served straight from the finders with a short cache lifetime.
    "staticfiles": {"BACKEND": "envduels_site.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# DJANGO_SECURE=1 for a deployment served over HTTPS (behind a proxy that sets
# X-Forwarded-Proto): cookies only over HTTPS, HSTS, plain HTTP redirected. Off by default so a
# local run over http://127.0.0.1 works. /healthz stays reachable over plain HTTP for probes.
DJANGO_SECURE = env_bool("DJANGO_SECURE", False)
if DJANGO_SECURE:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The reverse proxies whose X-Forwarded-For is believed (addresses or networks). A request from
# one of them comes from the last X-Forwarded-For entry (the one that proxy appended); any other
# request from its own peer address. Under DJANGO_SECURE=1 a proxy on this machine by default.
ENVDUELS_TRUSTED_PROXIES = env_networks(
    "ENVDUELS_TRUSTED_PROXIES", ["127.0.0.1", "::1"] if DJANGO_SECURE else [])

# Mail: the password-reset pages exist only when EMAIL_HOST names an SMTP server.
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "envduels@localhost")

# Failed sign-ins: after this many in ENVDUELS_SIGNIN_WINDOW_MINUTES for one account (or four
# times as many from one address), sign-in waits until the window has passed.
ENVDUELS_SIGNIN_FAILURES = env_int("ENVDUELS_SIGNIN_FAILURES", 5, minimum=1)
ENVDUELS_SIGNIN_WINDOW_MINUTES = env_int("ENVDUELS_SIGNIN_WINDOW_MINUTES", 15, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"expected_refusals": {"()": "envduels_site.log_filters.ExpectedRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("ENVDUELS_LOG_LEVEL", "INFO")},
    "loggers": {
        # A 403 is an answer, not a crash: its line without the traceback (log_filters.py).
        "django.request": {"filters": ["expected_refusals"]},
        "django.channels.server": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

# --- EnvDuels ---------------------------------------------------------------------------
ENVDUELS_SANDBOX = env_str("ENVDUELS_SANDBOX", "auto")
if ENVDUELS_SANDBOX not in {"auto", "docker", "bwrap", "unshare", "unsafe-local"}:
    raise ImproperlyConfigured(
        "ENVDUELS_SANDBOX must be one of auto, docker, bwrap, unshare, unsafe-local; "
        f"got {ENVDUELS_SANDBOX!r}"
    )
ENVDUELS_SANDBOX_IMAGE = env_str("ENVDUELS_SANDBOX_IMAGE", "envduels-sandbox:latest")
# At most this many started sandboxes wait for episodes (per backend); 0 starts each on demand.
ENVDUELS_SANDBOX_READY = env_int("ENVDUELS_SANDBOX_READY", 8, minimum=0)
ENVDUELS_BUILTIN_LATENCY_MS = env_int("ENVDUELS_BUILTIN_LATENCY_MS", 0, minimum=0)
# Triggering duels from the browser: at most this many per user per hour.
ENVDUELS_DUEL_RATE_PER_HOUR = env_int("ENVDUELS_DUEL_RATE_PER_HOUR", 30, minimum=1)
# Bounded work per request (docs/security.md): a replay download holds at most this many MB
# of stored transcript text (larger ones are written with `manage.py export --format html`);
# every database query a request makes stops after ENVDUELS_QUERY_TIMEOUT_MS; each user may
# search ENVDUELS_SEARCH_RATE_PER_MINUTE times and call the API ENVDUELS_API_RATE_PER_MINUTE
# times a minute.
ENVDUELS_REPLAY_MAX_MB = env_int("ENVDUELS_REPLAY_MAX_MB", 64, minimum=1)
# Request bodies are refused by the HTTP server before they are buffered (envduels_site/
# http_server.py): at most this many KiB, an upload to /import/ at most ..._UPLOAD_MAX_MB.
ENVDUELS_REQUEST_BODY_MAX_KB = env_int("ENVDUELS_REQUEST_BODY_MAX_KB", 1024, minimum=16)
ENVDUELS_IMPORT_UPLOAD_MAX_MB = env_int("ENVDUELS_IMPORT_UPLOAD_MAX_MB", 64, minimum=1)
ENVDUELS_QUERY_TIMEOUT_MS = env_int("ENVDUELS_QUERY_TIMEOUT_MS", 5000, minimum=100)
ENVDUELS_SEARCH_RATE_PER_MINUTE = env_int("ENVDUELS_SEARCH_RATE_PER_MINUTE", 20, minimum=1)
ENVDUELS_API_RATE_PER_MINUTE = env_int("ENVDUELS_API_RATE_PER_MINUTE", 120, minimum=1)
# Trainer-package downloads (/flywheel/export/…): per user a minute, and built at once per process.
ENVDUELS_PACKAGE_RATE_PER_MINUTE = env_int("ENVDUELS_PACKAGE_RATE_PER_MINUTE", 2, minimum=1)
ENVDUELS_PACKAGE_BUILDS_AT_ONCE = env_int("ENVDUELS_PACKAGE_BUILDS_AT_ONCE", 1, minimum=1)
# A running episode whose worker has not renewed its lease for this long is resumed elsewhere.
ENVDUELS_LEASE_SECONDS = env_int("ENVDUELS_LEASE_SECONDS", 30, minimum=2)
# Infrastructure faults (provider down after the retries, sandbox backend gone, database lost)
# are never results: the work is resumed after a backoff (this many seconds, doubled per fault,
# at most ..._MAX_SECONDS), up to ENVDUELS_INFRA_MAX_TRIES tries; then its duel ends failed.
ENVDUELS_INFRA_MAX_TRIES = env_int("ENVDUELS_INFRA_MAX_TRIES", 5, minimum=1)
ENVDUELS_INFRA_BACKOFF_SECONDS = env_int("ENVDUELS_INFRA_BACKOFF_SECONDS", 10, minimum=0)
ENVDUELS_INFRA_BACKOFF_MAX_SECONDS = env_int("ENVDUELS_INFRA_BACKOFF_MAX_SECONDS", 300, minimum=0)
# Task worker supervisors renew a heartbeat row per worker this often; a worker silent for three
# beats is dead and its task rows are reaped (manage.py worker, manage.py serve).
ENVDUELS_WORKER_HEARTBEAT_SECONDS = env_int("ENVDUELS_WORKER_HEARTBEAT_SECONDS", 10, minimum=1)
# Proof after play: every episode is replayed in a fresh sandbox (clocks moved), checked against
# its paired episode and searched for the hint before it ends (docs/environments.md). Off only
# to measure what it costs (benchmarks/tournament_bench.py --replay-pairs).
ENVDUELS_PROOF_AFTER_PLAY = env_bool("ENVDUELS_PROOF_AFTER_PLAY", True)
# Per-episode budgets: an episode that spends more ends as failed with its own reason.
ENVDUELS_EPISODE_TOKEN_BUDGET = env_int("ENVDUELS_EPISODE_TOKEN_BUDGET", 400_000, minimum=1)
ENVDUELS_EPISODE_TIME_BUDGET_SECONDS = env_int(
    "ENVDUELS_EPISODE_TIME_BUDGET_SECONDS", 1800, minimum=1
)
# Local models (manage.py local_model): the compiled inference-server wheel and one virtualenv
# per model live here, outside the repository, so a second install takes seconds.
ENVDUELS_CACHE_DIR = Path(
    os.environ.get("ENVDUELS_CACHE_DIR", Path.home() / ".cache" / "envduels")
)
# Per-player concurrency slots are lock files here (shared by every process on this host).
ENVDUELS_PLAYER_SLOT_DIR = Path(
    os.environ.get("ENVDUELS_PLAYER_SLOT_DIR", VAR_DIR / "player-slots")
)
