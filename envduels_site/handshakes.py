"""Websocket streams through an outage: a database or Redis that is away (restarting, failing
over) makes a stream's handshake or its stream end with close code 1013 ("try again later"),
which every viewer's script retries with a backoff, instead of an HTTP 500 for the handshake.

The session and user lookups (AuthMiddlewareStack), the consumer's own reads and its channel
layer all run inside the wrapped application, so one wrapper covers every route.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import Error as DatabaseError

logger = logging.getLogger(__name__)

CLOSE_TRY_AGAIN_LATER = 1013


def _outage_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (DatabaseError, OSError, TimeoutError)
    try:
        from redis.exceptions import RedisError
    except ImportError:  # no Redis client installed: the in-memory layer cannot be away
        return errors
    return (*errors, RedisError)


OUTAGE_ERRORS = _outage_errors()


class RetryLaterOnOutage:
    """ASGI middleware for the websocket router: an outage of the database or the channel
    layer while a stream connects or runs closes it with CLOSE_TRY_AGAIN_LATER (accepting it
    first when it was not yet: a close before accepting reaches the client as a bare HTTP 403).
    Any other error propagates as before."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        state = {"accepted": False, "closed": False}

        async def tracking_send(message: dict) -> None:
            if message["type"] == "websocket.accept":
                state["accepted"] = True
            elif message["type"] == "websocket.close":
                state["closed"] = True
            await send(message)

        try:
            await self.application(scope, receive, tracking_send)
        except OUTAGE_ERRORS as error:
            if state["closed"]:
                return
            logger.warning("websocket %s: closed with %d, the database or channel layer is "
                           "away: %s", scope.get("path", "?"), CLOSE_TRY_AGAIN_LATER, error)
            try:
                if not state["accepted"]:
                    await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
            except Exception:  # the client has gone meanwhile: nothing left to tell it
                logger.debug("websocket closed before its refusal was sent", exc_info=True)
