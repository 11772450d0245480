"""Top-level URLs: admin, sign-in, and the duels app (pages, API)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("duels.urls")),
]

# Malformed parameters answer 400 with their message (duels.views.errors), never a 500.
handler400 = "duels.views.errors.bad_request"
