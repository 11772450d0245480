"""Shared fixtures: the user trio and small data builders; per-process test isolation."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import factories
from tests.helpers.installation import copy_database, migrated_template

pytest_plugins = ["tests.scheduling"]


def pytest_configure(config):
    """Give this test process (one pytest-xdist worker, or the only process) files of its own.

    Built-in players have the same UUID everywhere, so two workers would otherwise wait on each
    other's player concurrency slots in var/player-slots. Worker processes the tests start
    inherit the environment variable. See docs/testing.md.
    """
    from django.conf import settings

    config.addinivalue_line(
        "markers", "local_model: needs the real local model (manage.py local_model install "
        "smollm2); tests/helpers/local_model.py")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    run_dir = Path(tempfile.mkdtemp(prefix=f"envduels-test-{worker}-"))
    config.envduels_run_dir = run_dir
    os.environ["ENVDUELS_PLAYER_SLOT_DIR"] = str(run_dir / "player-slots")
    settings.ENVDUELS_PLAYER_SLOT_DIR = run_dir / "player-slots"
    _plain_static_files(settings)
    _quick_password_hashes(settings)


def pytest_unconfigure(config):
    run_dir = getattr(config, "envduels_run_dir", None)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)


def _plain_static_files(settings) -> None:
    """Serve static files by their plain names in tests.

    The site's manifest storage would point pages at whatever `collectstatic` last wrote to
    var/staticfiles, which may be older than the checkout under test; the plain storage always
    serves the current files. tests/envduels_site/test_static_files.py covers the manifest.
    """
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def _quick_password_hashes(settings) -> None:
    """Hash test passwords with a quick hasher.

    The site's PBKDF2 costs about 0.4 CPU-seconds per password by design, and most tests create
    a user or sign in; the rules under test (who may see what, throttling) do not depend on the
    hasher. Subprocesses a test starts (`manage.py …`) use the site's own settings.
    """
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session", autouse=True)
def _test_database_from_template():
    """Each process's SQLite test database starts as a copy of the migrated template
    (tests/helpers/installation.py); Django's migrate then finds nothing to apply."""
    from django.db.backends.sqlite3.creation import DatabaseCreation

    original = DatabaseCreation._create_test_db

    def from_template(self, verbosity, autoclobber, keepdb=False):
        name = original(self, verbosity, autoclobber, keepdb)
        if not keepdb and not self.is_in_memory_db(name):
            copy_database(source=migrated_template(), target=Path(name))
        return name

    DatabaseCreation._create_test_db = from_template
    yield
    DatabaseCreation._create_test_db = original


# Rows `migrate` writes and no test changes.
MIGRATE_MADE_TABLES = frozenset({"django_content_type", "auth_permission"})


@pytest.fixture(scope="session", autouse=True)
def _flush_keeps_what_migrate_made():
    """After a transactional test, empty every table but content types and permissions, and
    send no post_migrate signal.

    Django's own flush empties those two as well and then makes the same rows again through
    post_migrate, a quarter of a CPU-second after each transactional test (hundreds of them).
    The only other post_migrate receiver, the step search index's, finds nothing to do after a
    flush (its triggers empty the index as the steps go). Test cases that flush a subset of
    apps or roll back serialized data keep Django's behaviour.
    """
    from django.core.management.color import no_style
    from django.db import connections
    from django.test.testcases import TransactionTestCase

    original = TransactionTestCase._fixture_teardown

    def flush_all_but_migrate_made(self):
        if self.available_apps is not None or self.serialized_rollback:
            return original(self)
        for name in self._databases_names(include_mirrors=False):
            connection = connections[name]
            tables = [table for table in connection.introspection.django_table_names(
                only_existing=True, include_views=False) if table not in MIGRATE_MADE_TABLES]
            connection.ops.execute_sql_flush(
                connection.ops.sql_flush(no_style(), tables, reset_sequences=False))

    TransactionTestCase._fixture_teardown = flush_all_but_migrate_made
    yield
    TransactionTestCase._fixture_teardown = original


@pytest.fixture(autouse=True)
def _channel_layers_of_its_own():
    """Each test starts with channel layers of its own. A Redis layer keeps asyncio locks bound
    to the event loop that first used them, and each async test has a loop of its own: a lock
    still held when an earlier test's loop closed would stop every later episode hub in this
    process from receiving (its viewers would get steps from the poll only)."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
def _duel_reads_of_its_own():
    """Each test starts with no shared reads of duels (duels/engine/duel_state.py): a rolled-back
    test's duel ids are given out again, and a read of the last test's duel 1 is not this one's."""
    from duels.engine.duel_state import duel_state_forget

    duel_state_forget()


@pytest.fixture
def owner(django_user_model):
    """An operator: starts duels (and so owns them)."""
    from django.contrib.auth.models import Group

    from duels.services.access import OPERATORS_GROUP

    user = django_user_model.objects.create_user("owner", password="owner-pass-123")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    return user


@pytest.fixture
def teammate(django_user_model):
    return django_user_model.objects.create_user("teammate", password="teammate-pass-123")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user(
        "staffer", password="staff-pass-123", is_staff=True, is_superuser=True
    )


@pytest.fixture
def outsider_client(client):
    """A client that is not signed in."""
    return client


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def make():
    """The factories module, e.g. `make.player()`, `make.finished_duel()`."""
    return factories
