"""`/ws/studies/<uuid>/`: a study page hears each field play's end (the group `study.<uuid>`
the doorbell rings when an episode of the study ends); refusals say why, as the episode stream's.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from duels.engine.doorbell import doorbell_episode_ended, doorbell_flush
from duels.models import Episode, Status
from tests.duels.test_consumers import application, make_user
from tests.duels.test_consumers_auth import closed_with
from tests.helpers.study_data import played_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def a_study_episode():
    study = played_study(harden=False)
    return study, Episode.objects.select_related("study").filter(study=study).first()


async def test_a_study_page_hears_a_field_play_end():
    study, episode = await a_study_episode()
    communicator = WebsocketCommunicator(application(), f"/ws/studies/{study.uuid}/")
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


async def test_refusals_say_why():
    study, _ = await a_study_episode()
    anonymous = WebsocketCommunicator(application(), f"/ws/studies/{study.uuid}/")
    anonymous.scope["user"] = AnonymousUser()
    assert await closed_with(anonymous) == 4401
    unknown = WebsocketCommunicator(application(),
                                    "/ws/studies/00000000-0000-0000-0000-000000000000/")
    unknown.scope["user"] = await make_user()
    assert await closed_with(unknown) == 4404
