"""ASGI entry point: HTTP through Django, websockets through Channels, on one port."""

import os

from envduels_site.startup import collector_paused, collector_resumed, web_process_warm

collector_paused()  # until the apps are ready (envduels_site/startup.py)

from django.core.asgi import get_asgi_application  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from duels.routing import websocket_urlpatterns  # noqa: E402
from envduels_site.handshakes import RetryLaterOnOutage  # noqa: E402
from envduels_site.origins import ExactOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Origins must match exactly, port included (envduels_site/origins.py); a database or
        # Redis away closes a stream with 1013, which viewers retry (envduels_site/handshakes.py).
        "websocket": RetryLaterOnOutage(ExactOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))),
    }
)

# The views and the first pages' templates load now, not in a visitor's first request.
web_process_warm()
# Resumed here too: in a process whose apps were ready before this module was imported (Daphne's
# runserver loads it after its own start-up), no app's ready() runs again to resume it.
collector_resumed()
