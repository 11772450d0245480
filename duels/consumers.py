"""Websocket consumer streaming one episode's steps: catch up from the database, then tail.

Protocol (docs/websocket.md): connect to `/ws/episodes/<uuid>/?since=N`;
the server sends every stored step with index > N (all when `since` is absent) in batches
`{"type": "steps", "episode", "items": [step messages]}`, then new steps as they come, each
as `{"type": "step", "episode", "index", "data"}` or, when several arrive close together, as
one `steps` batch, and `{"type": "episode.status", ...}` once the episode has ended. While a
reply is being written the server also forwards `{"type": "reply.partial", "episode", "index",
"text", "thinking"}` (the reply so far; never stored, replaced by step `index`). The
database is the truth: a doorbell (`step.ready`) is forwarded without a query when it carries
the next index, any gap is filled from the database, and a 0.5 s poll covers workers whose
channel layer is not shared with this server.

The viewers of one episode in one process share an EpisodeHub (duels/live/episode_hub.py): one
group membership, one encoding per step, coalesced frames and shared catch-up reads.

`/ws/studies/<uuid>/` (StudyConsumer) tells a study page when one of its field plays ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer

from duels.live.episode_hub import EpisodeHub, db_read, steps_frame
from duels.panels.owner import evaluation_group
from duels.panels.selectors import evaluation_exists
from duels.selectors.episodes import EpisodeState, episode_state
from duels.selectors.viewers import viewer_still_allowed
from duels.services.api_tokens import api_token_authenticate
from duels.studies.owner import study_group
from duels.studies.selectors import study_exists
from duels.words.error_text import reader_is_staff
from envduels_site.origins import bearer_token

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
# How often an open stream checks that its token or session still holds (revoked, expired,
# signed out, a new password, a deactivated account close it with CLOSE_UNAUTHENTICATED).
CREDENTIALS_CHECK_SECONDS = 2.0
CLOSE_NOT_FOUND = 4404


@db_read
def _load_state(episode_uuid: str) -> EpisodeState | None:
    return episode_state(episode_uuid=episode_uuid)


_state_loads: dict[tuple[asyncio.AbstractEventLoop, str], asyncio.Future] = {}


async def _load_state_shared(episode_uuid: str) -> EpisodeState | None:
    """`_load_state`, read once for all viewers of one episode connecting at the same time."""
    key = (asyncio.get_running_loop(), episode_uuid)
    load = _state_loads.get(key)
    if load is None:
        load = _state_loads[key] = asyncio.ensure_future(_load_state(episode_uuid))
        load.add_done_callback(lambda _: _state_loads.pop(key, None))
    return await asyncio.shield(load)


async def _viewer(scope: dict):
    """The signed-in user, or the owner of the API token in `Authorization: Bearer …`."""
    raw = bearer_token(scope)
    if raw is not None:
        return await database_sync_to_async(api_token_authenticate)(raw=raw)
    user = scope.get("user")
    return user if user is not None and user.is_authenticated else None


# The latest answer per set of credentials in this process, so the many streams one token or
# session opens cost one query per CREDENTIALS_CHECK_SECONDS between them: {key: (when, ok)}.
_credential_answers: dict[tuple, tuple[float, bool]] = {}


async def _credentials_hold(token: str | None, session_key: str | None, user_pk: int) -> bool:
    key = (token, session_key, user_pk)
    now = time.monotonic()
    answer = _credential_answers.get(key)
    if answer is None or now - answer[0] >= CREDENTIALS_CHECK_SECONDS / 2:
        allowed = await database_sync_to_async(viewer_still_allowed)(
            token=token, session_key=session_key, user_pk=user_pk)
        if len(_credential_answers) > 10_000:
            _credential_answers.clear()
        answer = _credential_answers[key] = (now, allowed)
    return answer[1]


async def _watch_credentials(consumer: AsyncJsonWebsocketConsumer, user_pk: int) -> None:
    """Close `consumer` with CLOSE_UNAUTHENTICATED once its credentials stop holding."""
    token = bearer_token(consumer.scope)
    session = consumer.scope.get("session")
    session_key = None if token or session is None else session.session_key
    while True:
        await asyncio.sleep(CREDENTIALS_CHECK_SECONDS)
        try:
            allowed = await _credentials_hold(token, session_key, user_pk)
        except Exception:  # the database is away: check again next time
            logger.warning("episode stream: credentials check failed", exc_info=True)
            continue
        if not allowed:
            await consumer.close(code=CLOSE_UNAUTHENTICATED)
            return


def _since(query_string: bytes) -> int:
    values = parse_qs(query_string.decode("latin-1")).get("since", [])
    try:
        # Clamped to the database's integers: `since=10**21` means "nothing stored yet is new".
        return min(max(int(values[-1]), -1), 2**31 - 1) if values else -1
    except ValueError:
        return -1


class EpisodeConsumer(AsyncJsonWebsocketConsumer):
    """Streams the steps of one episode to one signed-in viewer, each exactly once, in order.

    `last_index` is the last step queued for this viewer; `pending` holds the doorbell steps
    not yet sent as (index, encoded message), contiguous and ending at `last_index`;
    everything before them was sent. `early` keeps doorbell steps beyond a gap until the
    database fills it; `known` is the highest index a doorbell announced. Whoever holds
    `lock` is sending.
    """

    # No channel of its own: the viewer's hub holds the one group membership per process and
    # survives the layer going away (a Redis restart), which a consumer's own channel would not.
    channel_layer_alias = "episode-viewers-use-the-hub"

    async def connect(self) -> None:
        # Accept, then close with the reason's code: a close before accepting reaches a real
        # client through Daphne as a bare HTTP 403, the same for every reason.
        user = await _viewer(self.scope)
        if user is None:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        self.episode_uuid = str(self.scope["url_route"]["kwargs"]["episode_uuid"])
        state = await _load_state_shared(self.episode_uuid)
        if state is None:
            await self.refuse(CLOSE_NOT_FOUND)
            return
        self.episode_pk = state.pk
        self.staff = reader_is_staff(user)  # reads errors whole (duels/words/error_text.py)
        self.last_index = _since(self.scope.get("query_string", b""))
        self.ended = False
        self.known = -1
        self.recheck = False  # an episode.ended doorbell: read the status (and last steps)
        self.pending: list[tuple[int, str]] = []
        self.early: dict[int, str] = {}
        self.lock = asyncio.Lock()
        self.catcher: asyncio.Task | None = None
        self.partial: tuple[int, str] | None = None  # the newest partial reply not yet sent
        self.partial_sender: asyncio.Task | None = None
        await self.accept()
        self.guard = asyncio.create_task(_watch_credentials(self, user.pk))
        # Subscribe before the catch-up so no step falls between the two.
        self.hub = await EpisodeHub.join(get_channel_layer(), self.episode_uuid, self)
        await self.catch_up()

    async def refuse(self, code: int) -> None:
        await self.accept()
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        if getattr(self, "guard", None) is not None:
            self.guard.cancel()
        if getattr(self, "catcher", None) is not None:
            self.catcher.cancel()
        if getattr(self, "partial_sender", None) is not None:
            self.partial_sender.cancel()
        if getattr(self, "hub", None) is not None:
            self.hub.leave(self)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        """Viewers only listen: any frame they send is ignored unread (never decoded, so a
        malformed one is no error)."""

    async def send_news(self) -> None:
        """Send the pending steps, every stored step after them, then the status if the
        episode has ended (the caller holds the lock)."""
        self.recheck = False
        while not self.ended:
            announced = self.known
            state, rows, more = await self.hub.news(episode_pk=self.episode_pk,
                                                    since=self.last_index)
            # Doorbells may have queued more steps while the query ran: keep only newer rows.
            fresh = [(index, item) for index, item in rows if index > self.last_index]
            items = [item for _, item in self.pending] + [item for _, item in fresh]
            self.pending = []
            if fresh:
                self.last_index = fresh[-1][0]
                self.advance()  # doorbell steps that came during the query may follow now
            if items:
                await self.send(text_data=steps_frame(self.episode_uuid, items))
            if not more:
                if self.known == announced:  # a doorbell beyond the stored steps was wrong
                    self.known = min(self.known, self.last_index)
                if state is not None and state.is_done:
                    self.ended = True
                    await self.send_json(state.status_message(staff=self.staff))
                return

    async def catch_up(self) -> None:
        """Send everything the database has beyond what was sent (a gap, an end, a poll)."""
        async with self.lock:
            await self.send_news()
        self.catcher = None
        if self.has_news():
            self.hub.schedule()  # doorbells that came while this viewer was busy

    def has_news(self) -> bool:
        """Whether something is waiting to be sent to this viewer."""
        return not self.ended and bool(
            self.pending or self.recheck or self.known > self.last_index
        )

    async def flush(self, frames: dict[tuple[int, int], str]) -> None:
        """Send the pending steps (the hub's window ended), then start a catch-up if only
        the database has the rest; leave everything to a sender already at work."""
        if self.ended or self.lock.locked():
            return  # whoever holds the lock reschedules when it is done
        if self.pending:  # they come first whatever else the database has
            key = (self.pending[0][0], self.pending[-1][0])
            if key not in frames:
                frames[key] = steps_frame(self.episode_uuid, [item for _, item in self.pending])
            self.pending = []
            async with self.lock:
                await self.send(text_data=frames[key])
        if (self.recheck or self.known > self.last_index) and self.catcher is None:
            self.catcher = asyncio.create_task(self.catch_up())

    def take_step(self, index: int | None, item: str | None) -> None:
        """A `step.ready` doorbell with its encoded step message (None: it carried no data)."""
        if self.ended or index is None or index <= self.last_index:
            return
        # Without data (or after a gap) the database has every step up to `index`.
        self.known = max(self.known, index)
        if item is not None:
            self.early[index] = item
            self.advance()

    def advance(self) -> None:
        """Queue the early doorbell steps that now follow `last_index` without a gap."""
        while self.last_index + 1 in self.early:
            self.last_index += 1
            self.pending.append((self.last_index, self.early.pop(self.last_index)))
        if self.early and min(self.early) <= self.last_index:
            self.early = {i: item for i, item in self.early.items() if i > self.last_index}

    def take_partial(self, index: int, frame: str) -> None:
        """A `reply.partial` doorbell: send the newest one unless its step was already sent."""
        if self.ended or index <= self.last_index:
            return
        self.partial = (index, frame)
        if self.partial_sender is None:
            self.partial_sender = asyncio.create_task(self.send_partials())

    async def send_partials(self) -> None:
        """Send the newest partial reply until none is waiting; a stale one (its step has
        been queued meanwhile) is dropped, so partial text never follows its stored step."""
        try:
            while self.partial is not None:
                index, frame = self.partial
                self.partial = None
                if not self.ended and index > self.last_index:
                    await self.send(text_data=frame)
        except Exception:  # a closed connection; the consumer's disconnect cleans up
            logger.debug("episode %s: a partial reply was not sent", self.episode_uuid,
                         exc_info=True)
        finally:
            self.partial_sender = None

    def take_end(self) -> None:
        """An `episode.ended` doorbell: the database has the last steps and, soon, the end."""
        if not self.ended:
            self.recheck = True

    async def step_ready(self, event: dict) -> None:
        self.hub.deliver(event, [self])

    async def episode_ended(self, event: dict) -> None:
        self.hub.deliver(event, [self])

    async def duel_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""

    async def tournament_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""


class StudyConsumer(AsyncJsonWebsocketConsumer):
    """Tells one signed-in viewer of a study page each time a field play of the study ends
    (`{"type": "episode.ended", "episode", "status"}`), so the page refreshes its progress at
    once; the page polls too, so a lost message only delays it. Closes with 4401 or 4404 as the
    episode stream does, and with 4401 once its credentials stop holding. EvaluationConsumer
    does the same for a panel evaluation's plays."""

    kwarg = "study_uuid"

    @staticmethod
    def run_exists(*, run_uuid: str) -> bool:
        return study_exists(study_uuid=run_uuid)

    @staticmethod
    def run_group(*, run_uuid: str) -> str:
        return study_group(study_uuid=run_uuid)

    async def connect(self) -> None:
        user = await _viewer(self.scope)
        if user is None:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        run_uuid = str(self.scope["url_route"]["kwargs"][self.kwarg])
        if not await database_sync_to_async(self.run_exists)(run_uuid=run_uuid):
            await self.refuse(CLOSE_NOT_FOUND)
            return
        self.group = self.run_group(run_uuid=run_uuid)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.guard = asyncio.create_task(_watch_credentials(self, user.pk))

    async def refuse(self, code: int) -> None:
        await self.accept()
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        if getattr(self, "guard", None) is not None:
            self.guard.cancel()
        if getattr(self, "group", None) is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        """Viewers only listen."""

    async def episode_ended(self, event: dict) -> None:
        await self.send_json({"type": "episode.ended", "episode": event.get("episode"),
                              "status": event.get("status")})


class EvaluationConsumer(StudyConsumer):
    """`/ws/evaluations/<uuid>/`: each play of a panel evaluation that ends, as StudyConsumer."""

    kwarg = "evaluation_uuid"

    @staticmethod
    def run_exists(*, run_uuid: str) -> bool:
        return evaluation_exists(evaluation_uuid=run_uuid)

    @staticmethod
    def run_group(*, run_uuid: str) -> str:
        return evaluation_group(evaluation_uuid=run_uuid)
