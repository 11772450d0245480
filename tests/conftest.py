"""Shared fixtures: the user trio and small data builders."""

from __future__ import annotations

import pytest

from tests import factories


def pytest_configure(config):
    """Serve static files by their plain names in tests.

    The site's manifest storage would point pages at whatever `collectstatic` last wrote to
    var/staticfiles, which may be older than the checkout under test; the plain storage always
    serves the current files. tests/envduels_site/test_static_files.py covers the manifest.
    """
    from django.conf import settings

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="owner-pass-123")


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
