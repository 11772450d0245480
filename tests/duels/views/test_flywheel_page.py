"""/flywheel/ and the dashboard: a collapsing round's alarms, each measure's table and CSV, the
curated set's preview and its package download."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from duels.services.analytics import analytics_refresh
from tests.duels.analytics.test_flywheel import diverse_source, repeated_source
from tests.duels.services.test_estimates import FULL_REPORT

pytestmark = pytest.mark.django_db


def planted(make, *, collapse: bool):
    """Three rounds of two duels; the third repeats one design, trivially, when `collapse`."""
    rng = random.Random(3)
    tournament = make.tournament(name="cup", rounds=3)
    players = [make.player(name=f"setter-{k}") for k in range(4)]
    for round_index in range(3):
        for pair in range(2):
            trivial = collapse and round_index == 2
            results = {"unhinted_a": (True, True), "hinted_a": (True, True),
                       "unhinted_b": (True, True), "hinted_b": (True, True)} if trivial else {}
            duel = make.finished_duel(a=players[2 * pair], b=players[2 * pair + 1],
                                      tournament=tournament, round_index=round_index, **results)
            for side, env in (("a", duel.env_a), ("b", duel.env_b)):
                env.source = (repeated_source(2 * pair + (side == "b")) if trivial
                              else diverse_source(rng))
                env.validation = FULL_REPORT
                env.save()


def test_a_collapsing_round_raises_alarms_on_the_page_and_the_dashboard(make, client,
                                                                        admin_user):
    planted(make, collapse=True)
    analytics_refresh(resamples=10)
    client.force_login(admin_user)
    page = client.get("/flywheel/").content.decode()
    assert "cup · round 3" in page
    assert "Diversity collapsing" in page and "Difficulty out of the learnable band" in page
    assert "≥ 50%" in page  # the threshold is stated
    for slug in ("difficulty", "hint-gain", "diversity", "novelty", "setters"):
        assert f'id="figure-{slug}"' in page
        csv = client.get(f"/flywheel/{slug}.csv")
        assert csv.status_code == 200 and csv.content.decode().count("\n") >= 2
    dashboard = client.get("/").content.decode()
    assert "Flywheel alarms" in dashboard and "Diversity collapsing" in dashboard


def test_a_healthy_run_shows_no_alarm_and_previews_and_exports_a_set(make, client,
                                                                     admin_user):
    planted(make, collapse=False)
    analytics_refresh(resamples=10)
    client.force_login(admin_user)
    page = client.get("/flywheel/").content.decode()
    assert "No alarm" in page
    assert "Flywheel alarms" not in client.get("/").content.decode()
    preview = client.get("/flywheel/?size=3&per_cluster=1").content.decode()
    assert preview.count("/environments/") >= 3 and "gymnasium package" in preview
    bad = client.get("/flywheel/?pass_low=0.9&pass_high=0.1")
    assert bad.status_code == 400 and "0 ≤ low ≤ high ≤ 1" in bad.content.decode()
    download = client.get("/flywheel/export/gymnasium/?size=3")
    assert download.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    names = archive.namelist()
    assert any(name.endswith("README.md") for name in names)
    assert any(name.endswith("designs.json") for name in names)
    assert client.get("/flywheel/export/nope/").status_code == 404


def test_the_package_is_sent_a_chunk_at_a_time_under_asgi(make, admin_user):
    from asgiref.sync import async_to_sync
    from django.test import AsyncRequestFactory

    from duels.views.flywheel import flywheel_export

    planted(make, collapse=False)
    analytics_refresh(resamples=10)
    request = AsyncRequestFactory().get("/flywheel/export/gymnasium/?size=3")
    request.user = admin_user
    response = flywheel_export(request, "gymnasium")
    # An asynchronous body: Daphne sends the first chunk before the last is read.
    assert response.is_async and response["Content-Type"] == "application/zip"

    async def body() -> bytes:
        return b"".join([chunk async for chunk in response])

    archive = zipfile.ZipFile(io.BytesIO(async_to_sync(body)()))
    assert any(name.endswith("designs.json") for name in archive.namelist())


def test_the_demo_players_own_designs_raise_no_alarm_on_the_dashboard(make, client,
                                                                     admin_user):
    """A first run's data is the seeded built-in players' scripted designs: the dashboard
    raises no alarm about them (the flywheel page still shows every alarm); another setter's
    designs bring the alarms back."""
    from duels.models import Player
    from duels.players.builtin import BUILTIN_PLAYER_SPECS

    planted(make, collapse=True)
    analytics_refresh(resamples=10)
    demo = [spec["name"] for spec in BUILTIN_PLAYER_SPECS]
    for number, player in enumerate(Player.objects.filter(name__startswith="setter-")):
        Player.objects.filter(pk=player.pk).update(name=demo[number])
    client.force_login(admin_user)
    assert "Flywheel alarms" not in client.get("/").content.decode()
    assert "Diversity collapsing" in client.get("/flywheel/").content.decode()
    Player.objects.filter(name=demo[0]).update(name="a-real-setter")
    dashboard = client.get("/").content.decode()
    assert "Flywheel alarms" in dashboard and "Diversity collapsing" in dashboard
