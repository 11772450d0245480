"""Infrastructure faults with real parts: a model server answering 503 for a while, a sandbox
container killed from outside, the Docker engine restarted. The work resumes and the results are
those of an undisturbed run."""

from __future__ import annotations

import os
import threading
import time

import pytest

from duels.engine.scheduler import tournament_drive
from duels.engine.tournaments import tournament_create
from duels.models import Episode, Player, Status
from sandbox_runner import available_backends
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need
from tests.helpers.private_services import private_docker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

MODELS = ("scripted-architect-v1", "scripted-watcher-v1")


def _players(*, run: str, base_url: str) -> list[Player]:
    # The player's own retries give up quickly, so the outage reaches the engine.
    params = {"stream": False, "max_retries": 1, "backoff_base_s": 0.01, "timeout_s": 20}
    return [Player.objects.create(name=f"{run}-{model}", provider="openai_compatible",
                                  model=model, base_url=base_url, params=params)
            for model in MODELS]


def _results(tournament) -> tuple[list, list]:
    """Each duel's outcome and scores, and each episode's result, in schedule order."""
    duels = [(duel.round_index, duel.outcome, duel.setter_score_a, duel.setter_score_b,
              duel.env_a.content_hash if duel.env_a else None,
              duel.env_b.content_hash if duel.env_b else None)
             for duel in tournament.duels.order_by("round_index", "id")]
    episodes = sorted(
        (episode.environment.content_hash, episode.condition, episode.seed, episode.status,
         episode.success, episode.steps)
        for episode in Episode.objects.filter(duel__tournament=tournament)
        .select_related("environment"))
    return duels, episodes


@pytest.fixture
def sandbox(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 1
    settings.ENVDUELS_LEASE_SECONDS = 5


def test_a_provider_outage_mid_tournament_changes_no_outcome(sandbox):
    with ModelServer() as server:
        calm = tournament_create(players=_players(run="calm", base_url=server.base_url),
                                 rounds=1, attempts=2, concurrency=4)
        assert tournament_drive(tournament=calm)
        calm_requests = server.requests

    with ModelServer() as server:
        # The duel's two setter calls come first; the outage starts among the solver turns and
        # lasts longer than a player's own retries.
        server.outage(after=6, count=6)
        stormy = tournament_create(players=_players(run="stormy", base_url=server.base_url),
                                   rounds=1, attempts=2, concurrency=4)
        assert tournament_drive(tournament=stormy)
        assert server.unavailable == 6

    calm.refresh_from_db()
    stormy.refresh_from_db()
    assert calm.status == stormy.status == Status.FINISHED
    assert calm_requests > 12
    assert _results(stormy) == _results(calm)
    stormy_episodes = Episode.objects.filter(duel__tournament=stormy)
    # The outage was met by the engine (not only by the player's retries) and every episode hit
    # by it resumed and finished; no fault became a result.
    assert sum(stormy_episodes.values_list("infra_faults", flat=True)) >= 1
    assert not stormy_episodes.exclude(status=Status.FINISHED).exists()
    assert stormy_episodes.filter(infra_faults__gt=0, resumes__gt=0).exists()


def _kill_the_episode_containers(stop: threading.Event, killed: list[str]) -> None:
    """Once an episode has stored steps, kill this process's running sandbox containers from
    outside (only ours: other test runs may share the Docker engine), until a kill hit an
    episode's play: on a loaded machine a kill can land between an episode's last step and its
    end, or only on the replay that proves it after play, which the episode does not notice."""
    import docker

    from sandbox_runner.backends.docker import OWNER, OWNER_LABEL

    api = docker.from_env().api
    while not stop.is_set():
        if Episode.objects.filter(status=Status.RUNNING, steps__gte=1).exists():
            struck = False
            for container in api.containers(filters={"label": f"{OWNER_LABEL}={OWNER}",
                                                     "status": "running"}):
                try:
                    api.kill(container["Id"])
                    killed.append(container["Id"])
                    struck = True
                except docker.errors.APIError:
                    pass  # it ended meanwhile
            if struck and _an_episode_noticed(stop):
                return
        time.sleep(0.05)


def _an_episode_noticed(stop: threading.Event, *, seconds: float = 3.0) -> bool:
    """Whether an episode recorded an infrastructure fault within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        if Episode.objects.filter(infra_faults__gt=0).exists():
            return True
        time.sleep(0.05)
    return Episode.objects.filter(infra_faults__gt=0).exists()


def _drive_disturbed(settings, disturb, *args):
    """Drive a one-round tournament of two built-in players while `disturb(*args, stop, hits)`
    runs in a thread; return the tournament (reloaded) and what the disturber hit.

    The built-in players answer slowly (ENVDUELS_BUILTIN_LATENCY_MS) so that the disturber
    catches an episode under way; once it has struck, the rest of the tournament runs at full
    speed, as waiting longer would test nothing more.
    """
    from duels.services.players import player_seed_builtin

    player_seed_builtin()
    players = list(Player.objects.filter(name__in=["builtin-architect", "builtin-watcher"]))
    tournament = tournament_create(players=players, rounds=1, attempts=1, concurrency=2)
    stop, hits = threading.Event(), []

    def disturb_then_hurry() -> None:
        disturb(*args, stop, hits)
        if hits:
            settings.ENVDUELS_BUILTIN_LATENCY_MS = 0

    disturber = threading.Thread(target=disturb_then_hurry)
    disturber.start()
    try:
        assert tournament_drive(tournament=tournament)
    finally:
        stop.set()
        disturber.join(timeout=120)
    tournament.refresh_from_db()
    return tournament, hits


def _assert_finished_and_resumed(tournament, hit) -> None:
    """Every episode finished; each one in `hit` was handed back and resumed, not scored."""
    assert tournament.status == Status.FINISHED
    episodes = Episode.objects.filter(duel__tournament=tournament)
    assert not episodes.exclude(status=Status.FINISHED).exists()
    assert hit.exists()
    for episode in hit:
        assert episode.infra_faults >= 1 and episode.resumes >= 1
        indices = list(episode.trajectory.order_by("index").values_list("index", flat=True))
        assert indices == list(range(episode.steps + 1))


def test_a_sandbox_container_killed_from_outside_mid_episode_is_resumed(settings):
    need("docker" in available_backends(), "the docker sandbox backend is not available here")
    settings.ENVDUELS_SANDBOX = "docker"
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 0
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 300  # episodes last long enough to be caught
    tournament, killed = _drive_disturbed(settings, _kill_the_episode_containers)
    assert killed, "no episode container was caught running"
    _assert_finished_and_resumed(tournament, Episode.objects.filter(
        duel__tournament=tournament, infra_faults__gt=0, steps__gte=2))


def _restart_when_an_episode_is_under_way(engine, stop: threading.Event,
                                          restarted: list[int]) -> None:
    """Once an episode has stored steps while its sandbox runs, restart the Docker engine."""
    while not stop.is_set():
        running = list(Episode.objects.filter(status=Status.RUNNING, steps__gte=1)
                       .values_list("id", flat=True))
        if running and engine.client().containers.list(filters={"status": "running"}):
            engine.restart(down_seconds=1)
            restarted.extend(running)
            return
        time.sleep(0.05)


def test_the_docker_engine_restarting_mid_episode_is_resumed(settings, monkeypatch):
    from sandbox_runner.backends import _probe_cache
    from sandbox_runner.backends import docker as docker_backend
    from sandbox_runner.limits import configured_image
    from sandbox_runner.pool import POOL

    need("docker" in available_backends(), "the docker sandbox backend is not available here")
    host_interfaces = set(os.listdir("/sys/class/net"))
    with private_docker(image=configured_image()) as engine:
        # Every sandbox of this test lives in the private engine; nothing ready from the
        # machine's engine may be handed out, before or after.
        POOL.clear()
        monkeypatch.setenv("DOCKER_HOST", engine.url)
        monkeypatch.setattr(docker_backend, "_client", None)
        monkeypatch.setattr(docker_backend, "_reaped", False)
        _probe_cache.clear()
        settings.ENVDUELS_SANDBOX = "docker"
        settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 1
        settings.ENVDUELS_INFRA_BACKOFF_MAX_SECONDS = 4
        settings.ENVDUELS_INFRA_MAX_TRIES = 10  # a restart lasts a few seconds
        settings.ENVDUELS_BUILTIN_LATENCY_MS = 300  # episodes last long enough to be caught
        try:
            tournament, restarted = _drive_disturbed(
                settings, _restart_when_an_episode_is_under_way, engine)
        finally:
            POOL.clear()
            _probe_cache.clear()
    # The private engine left the machine's network alone (the host engine's docker0 above all).
    assert host_interfaces <= set(os.listdir("/sys/class/net"))
    assert restarted, "no episode was caught running"
    # The episodes cut off by the restart were handed back and resumed from their stored steps.
    _assert_finished_and_resumed(tournament, Episode.objects.filter(id__in=restarted))
