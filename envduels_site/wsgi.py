"""WSGI entry point (HTTP only; Daphne serves HTTP and websockets through asgi.py)."""

import os

from envduels_site.startup import collector_paused, collector_resumed, web_process_warm

collector_paused()  # until the apps are ready (envduels_site/startup.py)

from django.core.wsgi import get_wsgi_application  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
application = get_wsgi_application()
web_process_warm()  # the views and the first pages' templates, before the first request

# Resumed here too: in a process whose apps were ready before this module was imported (Daphne's
# runserver loads it after its own start-up), no app's ready() runs again to resume it.
collector_resumed()
