"""Websocket routes (wired in envduels_site/asgi.py behind the origin check and the session)."""

from __future__ import annotations

from django.urls import path

from duels.consumers import EpisodeConsumer

websocket_urlpatterns = [
    path("ws/episodes/<uuid:episode_uuid>/", EpisodeConsumer.as_asgi()),
]
