"""`/ws/studies/<uuid>/` and `/ws/evaluations/<uuid>/`: a page following a study or a panel
evaluation hears each of its plays' end (the group `study.<uuid>` or `evaluation.<uuid>` the
doorbell rings through the episode's owner); refusals say why, as the episode stream's."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from duels.engine.doorbell import doorbell_episode_ended, doorbell_flush
from duels.models import Condition, Episode, Evaluation, Status
from duels.panels.create import panel_from_designs
from tests import factories
from tests.duels.test_consumers import application, make_user
from tests.duels.test_consumers_auth import closed_with
from tests.helpers.study_data import played_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def a_study_play():
    study = played_study(harden=False)
    return study, Episode.objects.select_related("study").filter(study=study).first()


def an_evaluation_play():
    environment = factories.environment(benchmark_seeds=[3, 4])
    factories.hint(environment=environment)
    panel, _ = panel_from_designs(hashes=[environment.content_hash], name="one")
    evaluation = Evaluation.objects.create(panel=panel, player=factories.player(name="new"))
    episode = Episode.objects.create(evaluation=evaluation, environment=environment,
                                     solver=evaluation.player, seed=3,
                                     condition=Condition.UNHINTED)
    return evaluation, Episode.objects.select_related("evaluation").get(pk=episode.pk)


RUNS = [pytest.param("studies", a_study_play, id="study"),
        pytest.param("evaluations", an_evaluation_play, id="evaluation")]


@pytest.mark.parametrize(("stream", "make"), RUNS)
async def test_the_run_page_hears_a_play_end(stream, make):
    run, episode = await database_sync_to_async(make)()
    communicator = WebsocketCommunicator(application(), f"/ws/{stream}/{run.uuid}/")
    communicator.scope["user"] = await make_user()
    connected, _ = await communicator.connect()
    assert connected
    episode.status = Status.FINISHED
    await database_sync_to_async(doorbell_episode_ended)(episode=episode)
    await database_sync_to_async(doorbell_flush)()
    message = await communicator.receive_json_from(timeout=3)
    assert message == {"type": "episode.ended", "episode": str(episode.uuid),
                       "status": "finished"}
    await communicator.disconnect()


@pytest.mark.parametrize(("stream", "make"), RUNS)
async def test_refusals_say_why(stream, make):
    run, _ = await database_sync_to_async(make)()
    anonymous = WebsocketCommunicator(application(), f"/ws/{stream}/{run.uuid}/")
    anonymous.scope["user"] = AnonymousUser()
    assert await closed_with(anonymous) == 4401
    unknown = WebsocketCommunicator(application(),
                                    f"/ws/{stream}/00000000-0000-0000-0000-000000000000/")
    unknown.scope["user"] = await make_user()
    assert await closed_with(unknown) == 4404
