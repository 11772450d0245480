"""Websocket routes (wired in envduels_site/asgi.py behind the origin check and the session)."""

from __future__ import annotations

from django.urls import path

from duels.consumers import EpisodeConsumer, EvaluationConsumer, StudyConsumer

websocket_urlpatterns = [
    path("ws/episodes/<uuid:episode_uuid>/", EpisodeConsumer.as_asgi()),
    path("ws/studies/<uuid:study_uuid>/", StudyConsumer.as_asgi()),
    path("ws/evaluations/<uuid:evaluation_uuid>/", EvaluationConsumer.as_asgi()),
]
