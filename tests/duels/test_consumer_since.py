"""A `since` far past any stored step (10^21, a thousand digits) is "nothing yet", not a crash."""

from __future__ import annotations

import pytest

from tests.duels.test_consumers import connect, make_episode, make_user, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.mark.parametrize("since", [10**21, int("9" * 1000)])
async def test_a_huge_since_sends_only_the_status(since):
    user = await make_user()
    episode = await make_episode(steps=3, success=True, end_reason="done")
    communicator = await connect(episode, user, since=since)
    indices, _, final = await receive_until(communicator, status=True)
    assert indices == [] and final["status"] == "finished"
    await communicator.disconnect()
