"""Cancelling a tournament that is running stops its work within seconds."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from duels.engine.scheduler import tournament_drive
from duels.engine.tournaments import tournament_cancel, tournament_create
from duels.models import Episode, Player, Status
from duels.services.players import player_seed_builtin
from sandbox_runner import available_backends
from tests.helpers.parts import need


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_a_running_tournament_within_seconds(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 150
    player_seed_builtin()
    players = list(Player.objects.filter(name__in=["builtin-architect", "builtin-cautious",
                                                   "builtin-rookie"]))
    tournament = tournament_create(players=players, rounds=2, attempts=4, concurrency=4)

    def drive() -> None:
        try:
            tournament_drive(tournament=tournament)
        finally:
            connections.close_all()

    driver = threading.Thread(target=drive)
    driver.start()
    deadline = time.monotonic() + 60
    while not Episode.objects.filter(duel__tournament=tournament, steps__gte=1,
                                     status=Status.RUNNING).exists():
        assert time.monotonic() < deadline, "no episode started"
        time.sleep(0.05)
    cancelled_at = time.monotonic()
    tournament_cancel(tournament=tournament)
    driver.join(timeout=30)
    assert not driver.is_alive()
    assert time.monotonic() - cancelled_at < 5
    tournament.refresh_from_db()
    assert tournament.status == Status.CANCELLED
    episodes = Episode.objects.filter(duel__tournament=tournament)
    assert not episodes.filter(status__in=[Status.PENDING, Status.RUNNING]).exists()
    assert episodes.filter(status=Status.CANCELLED, end_reason="cancelled").exists()
    assert set(tournament.duels.values_list("status", flat=True)) <= {Status.CANCELLED,
                                                                      Status.FINISHED}
