"""Websocket routes (wired in envduels_site/asgi.py)."""

from __future__ import annotations

websocket_urlpatterns: list = []
