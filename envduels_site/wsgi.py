"""WSGI entry point (HTTP only; Daphne serves HTTP and websockets through asgi.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
application = get_wsgi_application()
