"""A panel's page lists its versions a page at a time and never loads their sources: a view of
a panel of 300 versions of 64 KiB each allocates a few MB, not the 38 MB of their sources."""

from __future__ import annotations

import hashlib
import tracemalloc

import pytest

from duels.models import Environment, Panel, PanelEntry
from duels.panels.selectors import PANEL_VERSIONS_PAGE

pytestmark = pytest.mark.django_db

VERSIONS = 300
SOURCE = "class Game:\n    pass\n" + "#" * (64 * 1024 - 40) + "\n"


@pytest.fixture
def large_panel():
    panel = Panel.objects.create(name="large", manifest_sha256="ab" * 32, origin="import")
    environments = Environment.objects.bulk_create(
        Environment(title=f"Game {number}", source=SOURCE, contract="envduels-v1",
                    class_name="Game", status="valid", validation={"valid": True})
        for number in range(VERSIONS))
    PanelEntry.objects.bulk_create(
        PanelEntry(panel=panel, position=number, entry_id=f"environments/a/env_{number:04d}",
                   environment=environment, domain="words", class_source=SOURCE,
                   source_sha256=hashlib.sha256(SOURCE.encode()).hexdigest(),
                   class_name="Game", max_turns=6, benchmark_seeds=[1, 2])
        for number, environment in enumerate(environments))
    return panel


def test_a_panel_page_lists_versions_a_page_at_a_time(client, owner, large_panel):
    client.force_login(owner)
    first = client.get(f"/panels/{large_panel.uuid}/").content.decode()
    assert f"{VERSIONS} versions" in first
    assert "environments/a/env_0000" in first and "environments/a/env_0099" in first
    assert "environments/a/env_0100" not in first and "next versions →" in first
    last = client.get(f"/panels/{large_panel.uuid}/?page=3").content.decode()
    assert "environments/a/env_0299" in last and "environments/a/env_0199" not in last
    assert f"versions 201–300 of {VERSIONS}" in last


def test_a_panel_page_never_loads_the_sources(client, owner, large_panel):
    client.force_login(owner)
    client.get(f"/panels/{large_panel.uuid}/")  # warm caches and templates
    tracemalloc.start()
    try:
        response = client.get(f"/panels/{large_panel.uuid}/")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 200
    sources = PANEL_VERSIONS_PAGE * 2 * len(SOURCE)  # one page's class files and sources
    assert peak < sources / 2, f"a view allocated {peak / 2**20:.1f} MiB"
